"""Fixtures of the editor tests: the built `qore` binary, a loopback provider, a workspace
(a qore config dir whose agents talk to that provider, and a project with a `.qoreignore`),
and `start_lsp`, which starts `qore lsp` under a pytest-lsp client as an editor would.

Promises: every test gets its own provider, config dir, data dir and project; every server
started is shut down (or killed) at the end of its test; the client answers
`workspace/applyEdit` by recording the edit and saying it applied it.
"""

from __future__ import annotations

import asyncio
import dataclasses
import os
import pathlib
import re
import shutil
import typing

import pytest
import pytest_asyncio
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient

from provider import Provider

REPO = pathlib.Path(__file__).resolve().parents[2]

ADD_PY = "def add(a, b):\n    return \n\nprint(add(1, 2))\n"
# (line, character) of the cursor in ADD_PY: after "    return ".
CURSOR = (1, 11)

AGENTS = {
    # A FIM agent: llama.cpp /infill.
    "fim": 'extends = "llamacpp-completion"\nprovider = "loop"\nmodel = "qwen"\n',
    # A chat agent used for completion: the <cursor> prompt, answer cleaned.
    "chat": 'extends = "llamacpp-chat"\nprovider = "loop"\nmodel = "tiny"\n',
    # The refactor agent.
    "fix": 'extends = "llamacpp-refactor"\nprovider = "loop"\nmodel = "tiny"\n',
}

ACTIONS = [
    {"title": "Refactor", "instruction": "Refactor this code."},
    {"title": "Add documentation", "instruction": "Add a docstring."},
]


def settings(**over) -> dict:
    """The qore settings object of the tests: agents named, no debounce."""
    completion = {"agent": "fim", "debounceMs": 0, "mode": "multi"}
    completion.update(over.pop("completion", {}))
    refactor = {"agent": "fix", "actions": ACTIONS}
    refactor.update(over.pop("refactor", {}))
    return {"enabled": True, "completion": completion, "refactor": refactor, **over}


def qore_bin() -> str:
    """QORE_BIN (set by crates/qore-cli/tests/editors.rs), else the debug build."""
    env = os.environ.get("QORE_BIN")
    target = pathlib.Path(os.environ.get("CARGO_TARGET_DIR") or REPO / "target")
    path = pathlib.Path(env) if env else target / "debug" / "qore"
    if not path.is_file():
        pytest.fail(f"qore binary not found at {path} (set QORE_BIN or build qore-cli)")
    return str(path)


@dataclasses.dataclass
class Workspace:
    config: pathlib.Path
    data: pathlib.Path
    project: pathlib.Path

    def file(self, rel: str, text: str = ADD_PY) -> str:
        """Write `rel` in the project; its file URI."""
        path = self.project / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        return path.as_uri()

    def env(self) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if k not in ("QORE_URL", "QORE_MODEL")}
        env.update(QORE_CONFIG_DIR=str(self.config), QORE_DATA_DIR=str(self.data))
        return env


@pytest.fixture
def provider():
    server = Provider()
    yield server
    server.close()


@pytest.fixture
def workspace(tmp_path: pathlib.Path, provider: Provider) -> Workspace:
    config = tmp_path / "config"
    (config / "providers").mkdir(parents=True)
    (config / "agents").mkdir()
    (config / "providers" / "loop.toml").write_text(
        f'name = "loop"\nprotocol = "llamacpp"\nurl = "{provider.url}/v1"\n'
    )
    for name, toml in AGENTS.items():
        (config / "agents" / f"{name}.toml").write_text(f'name = "{name}"\n{toml}')
    (config / "pipelines.toml").write_text('code_completion = ["fim"]\nrefactor = ["fix"]\n')
    project = tmp_path / "project"
    project.mkdir()
    (project / ".qoreignore").write_text("secret/\n")
    return Workspace(config, tmp_path / "data", project)


@pytest.fixture
def editor(start_lsp, workspace: Workspace):
    """`await editor(init_options)`: a started client with the project's add.py (ADD_PY)
    open; (client, its URI). Default settings: `{"qore": settings()}`."""

    async def start(init_options=None) -> tuple[LanguageClient, str]:
        client = await start_lsp(init_options or {"qore": settings()})
        uri = workspace.file("add.py")
        open_doc(client, uri)
        return client, uri

    return start


def capabilities() -> types.ClientCapabilities:
    return types.ClientCapabilities(
        workspace=types.WorkspaceClientCapabilities(
            apply_edit=True,
            did_change_configuration=types.DidChangeConfigurationClientCapabilities(),
        ),
        text_document=types.TextDocumentClientCapabilities(
            synchronization=types.TextDocumentSyncClientCapabilities(),
            completion=types.CompletionClientCapabilities(),
            inline_completion=types.InlineCompletionClientCapabilities(),
            code_action=types.CodeActionClientCapabilities(
                code_action_literal_support=types.ClientCodeActionLiteralOptions(
                    code_action_kind=types.ClientCodeActionKindOptions(
                        value_set=[types.CodeActionKind.RefactorRewrite]
                    )
                )
            ),
        ),
        window=types.WindowClientCapabilities(show_message=None),
    )


def read_code_actions_right(client: LanguageClient) -> None:
    """lsprotocol 2025.0.0 reads every object with a `command` key as a Command, so a
    CodeAction carrying a command comes out as a Command named by its JSON. A Command's
    `command` is a string, a CodeAction's is an object: tell them apart by that."""
    converter = client.protocol._converter

    def hook(obj, _type):
        kind = types.Command if isinstance(obj.get("command"), str) else types.CodeAction
        return converter.structure(obj, kind)

    converter.register_structure_hook(typing.Union[types.Command, types.CodeAction], hook)


@pytest_asyncio.fixture
async def start_lsp(workspace: Workspace):
    """`await start_lsp(init_options, args)`: a pytest-lsp client on a fresh `qore ARGS`
    (`lsp` unless given), initialized with `init_options` as initializationOptions (None:
    none); the `initialize` result is the client's `init_result`."""
    clients: list[LanguageClient] = []

    async def start(init_options=None, args=("lsp",)) -> LanguageClient:
        command = [qore_bin(), *args]
        config = ClientServerConfig(server_command=command, server_env=workspace.env())
        client = await config.start()
        read_code_actions_right(client)
        client.applied = []  # type: ignore[attr-defined]

        @client.feature(types.WORKSPACE_APPLY_EDIT)
        def apply_edit(params: types.ApplyWorkspaceEditParams):
            client.applied.append(params)  # type: ignore[attr-defined]
            return types.ApplyWorkspaceEditResult(applied=True)

        clients.append(client)
        client.init_result = await client.initialize_session(  # type: ignore[attr-defined]
            types.InitializeParams(
                capabilities=capabilities(),
                root_uri=workspace.project.as_uri(),
                workspace_folders=[
                    types.WorkspaceFolder(uri=workspace.project.as_uri(), name="project")
                ],
                initialization_options=init_options,
            )
        )
        return client

    yield start
    for client in clients:
        try:
            if client._server is not None and client._server.returncode is None:
                await asyncio.wait_for(client.shutdown_session(), 10)
        finally:
            server = client._server
            if server is not None and server.returncode is None:
                server.kill()  # it did not exit on `exit`: the test has failed already
            await client.stop()


def open_doc(client: LanguageClient, uri: str, text: str = ADD_PY, language: str = "python"):
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(
            text_document=types.TextDocumentItem(
                uri=uri, language_id=language, version=1, text=text
            )
        )
    )


def inline_params(uri: str, at=CURSOR) -> types.InlineCompletionParams:
    return types.InlineCompletionParams(
        text_document=types.TextDocumentIdentifier(uri=uri),
        position=types.Position(line=at[0], character=at[1]),
        context=types.InlineCompletionContext(
            trigger_kind=types.InlineCompletionTriggerKind.Invoked
        ),
    )


def inline_items(result) -> list[types.InlineCompletionItem]:
    """The items of an inline completion result, which must be `{"items": [...]}` (LSP also
    allows a bare list or null; qore promises the object, empty when there is nothing)."""
    assert isinstance(result, types.InlineCompletionList), result
    return list(result.items)


def nvim_bin() -> str | None:
    """NVIM_BIN (set by editors.rs from scripts/editor-env.sh nvim), else nvim on PATH."""
    return os.environ.get("NVIM_BIN") or shutil.which("nvim")


async def until(condition, what: str, seconds: float = 30.0) -> None:
    """Wait until `condition()` holds (an AssertionError naming `what` after `seconds`)."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + seconds
    while not condition():
        if loop.time() > deadline:
            raise AssertionError(f"never happened: {what}")
        await asyncio.sleep(0.05)


async def inline_texts(client: LanguageClient, uri: str, at=CURSOR) -> list[str]:
    """The insert texts `textDocument/inlineCompletion` at `at` answers (30 s at most)."""
    request = client.text_document_inline_completion_async(inline_params(uri, at))
    return [item.insert_text for item in inline_items(await asyncio.wait_for(request, 30))]


def doc_block(lang: str, starting: str = "") -> str:
    """The one ```LANG block of docs/editors.md that starts with `starting`."""
    doc = (REPO / "docs" / "editors.md").read_text(encoding="utf-8")
    blocks = re.findall(rf"```{lang}\n(.*?)```", doc, re.S)
    found = [block for block in blocks if block.startswith(starting)]
    assert len(found) == 1, f"docs/editors.md needs one ```{lang} block starting {starting!r}"
    return found[0]
