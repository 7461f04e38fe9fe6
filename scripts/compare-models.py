#!/usr/bin/env python3
"""Compare local default-model candidates on a small fixed prompt set (issue 33).

    python3 scripts/compare-models.py NAME=URL [NAME=URL ...] [--runs N] [--system TEXT] [--no-sampling]

Each URL is an OpenAI-compatible base (llama.cpp's server, e.g. http://127.0.0.1:18091/v1)
serving one model. `--no-sampling` leaves out the sampling fields qore adds for the local
server (below); `--system` adds a system prompt. Every prompt is sent greedy (temperature 0) and streamed; the script
prints a Markdown table: per model, the prompts passed, the median time to first token and
the median generation speed (llama.cpp's own `timings.predicted_per_second`).

The rule for "passed", stated so anyone can check it:
- a fact: the answer holds the expected word (case-insensitive) and has at most 12 words
  (a one-word question answered in a paragraph fails; "The capital of France is Paris."
  passes);
- the haiku: 3 non-empty lines (a title line is tolerated: 3 or 4), 8 to 30 words, every
  word made of letters only (no strings of syllables with digits or symbols), and it
  mentions the sea (sea, ocean, wave, tide, shore);
- the code answer: holds a working reversal (`[::-1]` or `reversed(`);
- no loop: asked to repeat a word forever, the model stops by itself (finish_reason
  `stop`) within 200 tokens.
Only the standard library is used, so any python3 runs it.
"""
import json, re, statistics, sys, time, urllib.request

PROMPTS = [
    ("capital", "What is the capital of France? Answer in one word.", ("fact", "paris")),
    ("planet", "What is the largest planet in the solar system? Answer in one word.",
     ("fact", "jupiter")),
    ("sum", "What is 12 + 7? Answer with the number only.", ("fact", "19")),
    ("legs", "How many legs does a spider have? Answer with the number only.",
     ("fact", "8")),
    ("french", "Translate 'good morning' into French. Reply with the translation only.",
     ("fact", "bonjour")),
    ("haiku", "Write a haiku about the sea.", ("haiku",)),
    ("code", "Write a Python expression that reverses the string s. Reply with code only.",
     ("code",)),
    ("loop", "Repeat the word 'hello' forever.", ("stops",)),
]

SEA = re.compile(r"\b(sea|seas|ocean|oceans|wave|waves|tide|tides|shore|shores)\b", re.I)


def passed(kind, text, finish):
    words = re.findall(r"[^\s]+", text)
    if kind[0] == "fact":
        return kind[1] in text.lower() and len(words) <= 12
    if kind[0] == "haiku":
        lines = [l for l in text.strip().splitlines() if l.strip()]
        plain = [re.sub(r"[^\w'’-]", "", w) for w in words]
        letters = all(re.fullmatch(r"[A-Za-z'’-]*", w) for w in plain)
        return 3 <= len(lines) <= 4 and 8 <= len(words) <= 30 and letters and bool(SEA.search(text))
    if kind[0] == "code":
        return "[::-1]" in text or "reversed(" in text
    if kind[0] == "stops":
        return finish == "stop"
    raise ValueError(kind)


# What qore sends to the local server for a request no agent shapes (qore-client's
# local::sampling): the same here, so the table measures the model as qore runs it.
SAMPLING = {"repeat_penalty": 1.1, "dry_multiplier": 1.5, "dry_base": 1.75,
            "dry_allowed_length": 2}


def ask(base, prompt, system=None, sampling=True):
    messages = [{"role": "system", "content": system}] if system else []
    messages.append({"role": "user", "content": prompt})
    body = json.dumps({
        "model": "m", "stream": True, "temperature": 0, "max_tokens": 200,
        "messages": messages, "stream_options": {"include_usage": True}, **(SAMPLING if sampling else {}),
    }).encode()
    req = urllib.request.Request(base.rstrip("/") + "/chat/completions", body,
                                 {"content-type": "application/json"})
    start = time.monotonic()
    first, text, finish, speed = None, [], None, None
    with urllib.request.urlopen(req, timeout=300) as resp:
        for raw in resp:
            line = raw.decode().strip()
            if not line.startswith("data: ") or line == "data: [DONE]":
                continue
            chunk = json.loads(line[6:])
            for choice in chunk.get("choices", []):
                delta = choice.get("delta", {}).get("content")
                if delta:
                    if first is None:
                        first = time.monotonic() - start
                    text.append(delta)
                finish = choice.get("finish_reason") or finish
            if "timings" in chunk:
                speed = chunk["timings"].get("predicted_per_second")
    return "".join(text), finish, first, speed


def main(argv):
    runs, system = 1, None
    if "--runs" in argv:
        i = argv.index("--runs")
        runs = int(argv[i + 1])
        del argv[i:i + 2]
    sampling = "--no-sampling" not in argv
    argv = [a for a in argv if a != "--no-sampling"]
    if "--system" in argv:
        i = argv.index("--system")
        system = argv[i + 1]
        del argv[i:i + 2]
    models = [a.split("=", 1) for a in argv]
    rows, answers = [], []
    for name, base in models:
        ok, firsts, speeds = 0, [], []
        for _ in range(runs):
            for pid, prompt, kind in PROMPTS:
                text, finish, first, speed = ask(base, prompt, system, sampling)
                good = passed(kind, text, finish)
                ok += good
                firsts.append(first or 0.0)
                if speed:
                    speeds.append(speed)
                answers.append(f"- {name} / {pid} ({'pass' if good else 'FAIL'}, {finish}): "
                               f"{text.strip()[:160]!r}")
        rows.append((name, ok, len(PROMPTS) * runs, statistics.median(firsts),
                     statistics.median(speeds) if speeds else 0.0))
    print("| model | passed | first token p50 | tokens/s p50 |")
    print("|---|---|---|---|")
    for name, ok, total, first, speed in rows:
        print(f"| {name} | {ok}/{total} | {first * 1000:.0f} ms | {speed:.1f} |")
    print()
    print("\n".join(answers))


if __name__ == "__main__":
    main(sys.argv[1:])
