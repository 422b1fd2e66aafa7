"""coco_java without the JVM: a fake ``java`` (a small Python script first on PATH) plays pycocoevalcap's protocols.

The METEOR fake answers ``SCORE ||| refs... ||| hyp`` with the statistics line ``"<number of refs> <number of hyp
words> "`` and ``EVAL ||| s1 ||| s2 ...`` with one score per item, ``(refs + 10 * words) / 100``, then the total,
their sum plus 0.5; the PTB fake echoes every input line's whitespace-separated words (a NUL line as an empty line).
Expected values follow from those rules and from pycocoevalcap 1.2's meteor/meteor.py and tokenizer/ptbtokenizer.py
(the command lines, the ``|||`` removal and double-space collapse, the punctuation list), not from coco_java's output.
"""

import importlib
import importlib.machinery
import importlib.util
import json
import os
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from service.scoring import coco_java
from service.scoring.coco_java import JavaUnavailable, Meteor

FAKE_JAVA = r"""
import json, os, signal, sys, time

signal.alarm(20)
log = os.environ["FAKE_JAVA_LOG"]
mode = dict(
    item.split("=", 1) if "=" in item else (item, "")
    for item in os.environ.get("FAKE_JAVA_MODE", "").split(",")
    if item
)


def record(name, data):
    with open(os.path.join(log, name), "a") as f:
        f.write(json.dumps(data) + "\n")


def out(data):
    os.write(1, data)


if "-cp" in sys.argv:
    record("ptb.jsonl", {"argv": sys.argv[1:]})
    with open(sys.argv[-1], "rb") as f:
        body = f.read()
    with open(os.path.join(log, "ptb-input.bin"), "wb") as f:
        f.write(body)
    if "sleep" in mode:
        time.sleep(float(mode["sleep"]))
    lines = [b"" if line == b"\0" else b" ".join(line.split()) for line in body.split(b"\n")[:-1]]
    text = b"\n".join(lines) + b"\n"
    if "short" in mode:
        text = b"\n".join(lines[:2]) + b"\n"
    if "nonl" in mode:
        text = text[:-1]
    if "badutf8" in mode:
        text = b"\xff" + text
    out(text)
    if "stderr" in mode:
        os.write(2, b"".join(b"%03d," % i for i in range(100)))
    sys.exit(int(mode.get("exit", "0")))

record("starts.jsonl", {"pid": os.getpid(), "argv": sys.argv[1:], "cwd": os.getcwd()})
sys.stderr.write("fake-meteor-stderr\n")
sys.stderr.flush()
n_score = 0
stdin_log = os.path.join(log, "stdin-%d.bin" % os.getpid())
for raw in sys.stdin.buffer:
    with open(stdin_log, "ab") as f:
        f.write(raw)
    line = raw.rstrip(b"\n").decode("utf-8", "surrogateescape")
    parts = line.split(" ||| ")
    if parts[0] == "SCORE":
        n_score += 1
        if mode.get("delay-score", ":").split(":")[0] == str(n_score):
            time.sleep(float(mode["delay-score"].split(":")[1]))
        answer = ("%d %d \n" % (len(parts) - 2, len(parts[-1].split()))).encode()
        if "badutf8" in mode:
            answer = b"\xff" + answer
        if "split" in mode:
            out(answer[:2])
            time.sleep(0.05)
            out(answer[2:])
        else:
            out(answer)
    elif parts[0] == "EVAL":
        if "exit-on-eval" in mode:
            sys.exit(0)
        if "delay-eval" in mode:
            time.sleep(float(mode["delay-eval"]))
        if "garbage-eval" in mode:
            out(b"not-a-number\nleft")
            continue
        items = [(int(s.split()[0]) + 10 * int(s.split()[1])) / 100 for s in parts[1:]]
        out("".join("%r\n" % x for x in items).encode())
        if "delay-total" in mode:
            time.sleep(float(mode["delay-total"]))
        out(("%r\n" % (sum(items) + 0.5)).encode())
        if "exit-after-eval" in mode:
            sys.exit(0)
"""

METEOR_ARGS = ["-jar", "-Xmx2G", "meteor-1.5.jar", "-", "-", "-stdio", "-l", "en", "-norm"]
PTB_ARGS = ["edu.stanford.nlp.process.PTBTokenizer", "-preserveLines", "-lowerCase"]
PACKAGE = Path(importlib.import_module("pycocoevalcap.meteor.meteor").__file__).parent.parent
PUNCTUATIONS = [
    "''",
    "'",
    "``",
    "`",
    "-LRB-",
    "-RRB-",
    "-LCB-",
    "-RCB-",
    ".",
    "?",
    "!",
    ",",
    ":",
    "-",
    "--",
    "...",
    ";",
]


class Fake:
    """The fake ``java`` on PATH, its package directory of empty jars, and what it recorded."""

    def __init__(self, root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
        self.bin, self.pkg, self.log = root / "bin", root / "pkg", root / "log"
        for d in (self.bin, self.pkg / "meteor", self.pkg / "tokenizer", self.log):
            d.mkdir(parents=True)
        (self.pkg / "meteor" / "meteor-1.5.jar").write_bytes(b"")
        (self.pkg / "tokenizer" / "stanford-corenlp-3.4.1.jar").write_bytes(b"")
        self.java = self.bin / "java"
        self.java.write_text(f"#!{sys.executable} -IS\n{FAKE_JAVA}")
        self.java.chmod(0o755)
        self.monkeypatch = monkeypatch
        monkeypatch.setenv("PATH", str(self.bin))
        monkeypatch.setenv("FAKE_JAVA_LOG", str(self.log))
        monkeypatch.setenv("FAKE_JAVA_MODE", "")
        monkeypatch.setattr(coco_java, "_package_dir", lambda: self.pkg)

    def mode(self, mode: str) -> None:
        self.monkeypatch.setenv("FAKE_JAVA_MODE", mode)

    def starts(self) -> list[dict]:
        path = self.log / "starts.jsonl"
        return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []

    def stdin(self, pid: int) -> bytes:
        return (self.log / f"stdin-{pid}.bin").read_bytes()

    def ptb_calls(self) -> list[dict]:
        path = self.log / "ptb.jsonl"
        return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def gone(pid: int) -> bool:
    """Whether the process has ended and been reaped (no zombie left)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return False


@pytest.fixture
def fake(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Fake:
    return Fake(tmp_path, monkeypatch)


@pytest.fixture
def meteor(fake: Fake) -> Iterator[Meteor]:
    m = Meteor()
    yield m
    m.close()


# ---------------------------------------------------------------- METEOR


def test_meteor_lines_written_and_scores_read(fake: Fake, meteor: Meteor, capfd: pytest.CaptureFixture) -> None:
    hyps = ["a ||| b  c", "x    y", "caf\udce9 one"]
    refs = [["r one", "r two words"], ["only ref"], ["p", "q", "r"]]
    total, items = meteor.score(hyps, refs)
    [start] = fake.starts()
    assert start["argv"] == METEOR_ARGS
    assert start["cwd"] == str(fake.pkg / "meteor")
    # pycocoevalcap's _stat: hyp.replace('|||', '').replace('  ', ' ') (one pass: four spaces become two)
    assert fake.stdin(start["pid"]) == (
        b"SCORE ||| r one ||| r two words ||| a b c\n"
        b"SCORE ||| only ref ||| x  y\n"
        b"SCORE ||| p ||| q ||| r ||| caf\xed\xb3\xa9 one\n"
        b"EVAL ||| 2 3 ||| 1 2 ||| 3 2\n"
    )
    assert items == [0.32, 0.21, 0.23]
    assert total == pytest.approx(0.32 + 0.21 + 0.23 + 0.5)
    assert "fake-meteor-stderr" not in capfd.readouterr().err


def test_meteor_started_once_and_reused(fake: Fake, meteor: Meteor, monkeypatch: pytest.MonkeyPatch) -> None:
    registered: list = []
    monkeypatch.setattr(coco_java.atexit, "register", registered.append)
    assert not meteor.started
    assert meteor.score(["a b"], [["c"]]) == (pytest.approx(0.21 + 0.5), [0.21])
    assert meteor.started
    assert meteor.score(["a b c d"], [["c", "d"]]) == (pytest.approx(0.42 + 0.5), [0.42])
    [start] = fake.starts()
    assert fake.stdin(start["pid"]) == (
        b"SCORE ||| c ||| a b\nEVAL ||| 1 2\nSCORE ||| c ||| d ||| a b c d\nEVAL ||| 2 4\n"
    )
    assert registered == [meteor.close]
    meteor.close()
    assert not meteor.started and gone(start["pid"])


def test_meteor_answers_in_pieces(fake: Fake, meteor: Meteor) -> None:
    fake.mode("split")
    assert meteor.score(["a b", "c"], [["r"], ["s", "t"]]) == (pytest.approx(0.21 + 0.12 + 0.5), [0.21, 0.12])


def test_meteor_undecodable_answer_is_replaced(fake: Fake, meteor: Meteor) -> None:
    fake.mode("badutf8")
    with pytest.raises(JavaUnavailable):
        meteor.score(["a b"], [["r"]])
    [start] = fake.starts()
    assert fake.stdin(start["pid"]).startswith(b"SCORE ||| r ||| a b\nEVAL ||| \xef\xbf\xbd1 2\n")


def test_meteor_restarts_when_the_process_ended(fake: Fake, meteor: Meteor) -> None:
    fake.mode("exit-after-eval")
    assert meteor.score(["a"], [["r"]]) == (pytest.approx(0.11 + 0.5), [0.11])
    [first] = fake.starts()
    deadline = time.monotonic() + 5
    while meteor.started and time.monotonic() < deadline:
        time.sleep(0.01)
    assert not meteor.started
    fake.mode("")
    assert meteor.score(["a b"], [["r"]]) == (pytest.approx(0.21 + 0.5), [0.21])
    second = fake.starts()[1]
    assert second["pid"] != first["pid"] and meteor.started
    assert fake.stdin(second["pid"]) == b"SCORE ||| r ||| a b\nEVAL ||| 1 2\n"


def test_meteor_garbage_stops_the_process_and_restarts(fake: Fake, meteor: Meteor) -> None:
    fake.mode("garbage-eval")
    t0 = time.monotonic()
    with pytest.raises(JavaUnavailable, match=r"^METEOR failed: could not convert string to float"):
        meteor.score(["a"], [["r"]])
    assert time.monotonic() - t0 < 10
    [first] = fake.starts()
    assert gone(first["pid"]) and not meteor.started
    fake.mode("")
    assert meteor.score(["a b"], [["r"]]) == (pytest.approx(0.21 + 0.5), [0.21])
    second = fake.starts()[1]
    assert fake.stdin(second["pid"]) == b"SCORE ||| r ||| a b\nEVAL ||| 1 2\n"


def test_meteor_process_that_ends(fake: Fake, meteor: Meteor) -> None:
    fake.mode("exit-on-eval")
    with pytest.raises(JavaUnavailable, match=r"^METEOR failed: the METEOR process ended$"):
        meteor.score(["a"], [["r"]])
    [start] = fake.starts()
    assert gone(start["pid"]) and not meteor.started


def test_meteor_lengths_must_match(fake: Fake, meteor: Meteor) -> None:
    with pytest.raises(JavaUnavailable, match=r"^METEOR failed"):
        meteor.score(["a", "b"], [["r"]])
    [start] = fake.starts()
    assert gone(start["pid"]) and not meteor.started


def test_meteor_owner_pid(fake: Fake, meteor: Meteor) -> None:
    meteor.score(["a"], [["r"]])
    proc = meteor._proc
    assert proc is not None and meteor.started
    meteor._owner = os.getpid() + 1  # as in a forked child: the JVM belongs to the parent
    try:
        assert not meteor.started
        assert meteor.score(["a b"], [["r"]]) == (pytest.approx(0.21 + 0.5), [0.21])
        assert len(fake.starts()) == 2 and meteor.started
        assert proc.poll() is None
        meteor._owner = os.getpid() + 1
        meteor.close()
        assert meteor._proc is None and proc.poll() is None
    finally:
        proc.kill()
        proc.wait()
    second = fake.starts()[1]
    assert not gone(second["pid"])
    os.kill(second["pid"], 9)
    os.waitpid(second["pid"], 0)


@pytest.fixture
def short_timeouts(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(coco_java, "METEOR_START_TIMEOUT_S", 30.0)
    monkeypatch.setattr(coco_java, "METEOR_LINE_TIMEOUT_S", 1.0)


@pytest.mark.usefixtures("short_timeouts")
def test_meteor_first_answer_waits_the_start_timeout(fake: Fake, meteor: Meteor) -> None:
    fake.mode("delay-score=1:2.5")
    assert meteor.score(["a", "b c"], [["r"], ["r"]]) == (pytest.approx(0.11 + 0.21 + 0.5), [0.11, 0.21])


@pytest.mark.usefixtures("short_timeouts")
def test_meteor_later_answers_use_the_line_timeout(fake: Fake, meteor: Meteor) -> None:
    fake.mode("delay-score=2:20")
    with pytest.raises(JavaUnavailable, match=r"^METEOR failed: METEOR did not answer within"):
        meteor.score(["a", "b c"], [["r"], ["r"]])
    [start] = fake.starts()
    assert gone(start["pid"])


@pytest.mark.usefixtures("short_timeouts")
def test_meteor_started_first_answer_uses_the_line_timeout(fake: Fake, meteor: Meteor) -> None:
    fake.mode("delay-score=2:20")
    meteor.score(["a"], [["r"]])
    with pytest.raises(JavaUnavailable, match=r"^METEOR failed: METEOR did not answer within"):
        meteor.score(["b"], [["r"]])


@pytest.mark.usefixtures("short_timeouts")
def test_meteor_total_uses_the_line_timeout(fake: Fake, meteor: Meteor) -> None:
    fake.mode("delay-total=20")
    with pytest.raises(JavaUnavailable, match=r"^METEOR failed: METEOR did not answer within 1 s$"):
        meteor.score(["a"], [["r"]])


@pytest.mark.usefixtures("short_timeouts")
def test_meteor_eval_answers_use_the_line_timeout(fake: Fake, meteor: Meteor) -> None:
    fake.mode("delay-eval=20")
    with pytest.raises(JavaUnavailable, match=r"^METEOR failed: METEOR did not answer within 1 s$"):
        meteor.score(["a"], [["r"]])


# ---------------------------------------------------------------- PTB tokenizer


def test_ptb_body_command_and_tokens(fake: Fake) -> None:
    texts = [
        "A dog , runs .",
        "two\r\nlines\nhere\rand\u2028more",
        "-LRB- x -RRB- '' `` ... ; : ! ? - --",
        "caf\udce9",
        "1\xa01/2 cups",
    ]
    tokens = coco_java.ptb_java_tokens(texts)
    [call] = fake.ptb_calls()
    # the jar joins "1 1/2" into one token with a no-break space inside; it stays one token
    args = call["argv"]
    assert args[:2] == ["-cp", str(fake.pkg / "tokenizer" / "stanford-corenlp-3.4.1.jar")]
    assert args[2:5] == PTB_ARGS and len(args) == 6
    assert (fake.log / "ptb-input.bin").read_bytes() == (
        b"A dog , runs .\n\0\ntwo lines here and more\n\0\n"
        b"-LRB- x -RRB- '' `` ... ; : ! ? - --\n\0\ncaf\xed\xb3\xa9\n\0\n1\xc2\xa01/2 cups\n\0\n"
    )
    assert tokens == [
        ["A", "dog", "runs"],
        ["two", "lines", "here", "and", "more"],
        ["x"],
        ["caf\ufffd\ufffd\ufffd"],
        ["1\xa01/2", "cups"],
    ]
    assert all(w not in PUNCTUATIONS for t in tokens for w in t)


def test_ptb_empty_runs_nothing(fake: Fake, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", str(fake.log))
    assert coco_java.ptb_java_tokens([]) == []
    assert fake.ptb_calls() == []


def test_ptb_output_without_final_newline(fake: Fake) -> None:
    fake.mode("nonl")
    assert coco_java.ptb_java_tokens(["a b", "c"]) == [["a", "b"], ["c"]]


def test_ptb_undecodable_output(fake: Fake) -> None:
    fake.mode("badutf8")
    assert coco_java.ptb_java_tokens(["a b", "c"]) == [["\ufffda", "b"], ["c"]]


def test_ptb_failed_exit(fake: Fake) -> None:
    fake.mode("exit=3,stderr")
    with pytest.raises(JavaUnavailable) as exc:
        coco_java.ptb_java_tokens(["a b", "c"])
    tail = b"".join(b"%03d," % i for i in range(25, 100))
    assert len(tail) == 300
    assert str(exc.value) == f"the PTB tokenizer failed (exit 3): {tail!r}"


def test_ptb_too_few_lines(fake: Fake) -> None:
    fake.mode("short")
    with pytest.raises(JavaUnavailable, match=r"^the PTB tokenizer failed \(exit 0\)"):
        coco_java.ptb_java_tokens(["a b", "c"])


def test_ptb_timeout(fake: Fake, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(coco_java, "PTB_TIMEOUT_S", 1.0)
    fake.mode("sleep=20")
    t0 = time.monotonic()
    with pytest.raises(JavaUnavailable, match=r"^the PTB tokenizer took longer than 1 s$"):
        coco_java.ptb_java_tokens(["a"])
    assert time.monotonic() - t0 < 10  # the child sleeps 20 s: the call did not wait for it


# ---------------------------------------------------------------- java, jars


def test_package_dir_is_pycocoevalcaps() -> None:
    assert coco_java._package_dir() == PACKAGE


@pytest.mark.parametrize("spec", [None, importlib.machinery.ModuleSpec("pycocoevalcap", None)])
def test_package_dir_missing(monkeypatch: pytest.MonkeyPatch, spec: importlib.machinery.ModuleSpec | None) -> None:
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: spec if name == "pycocoevalcap" else real(name))
    with pytest.raises(JavaUnavailable, match=r"^the pycocoevalcap package"):
        coco_java._package_dir()


def test_jar_of_the_package() -> None:
    root = PACKAGE
    assert coco_java.jar(coco_java.PTB_JAR) == root / "tokenizer" / "stanford-corenlp-3.4.1.jar"
    assert coco_java.jar(coco_java.METEOR_JAR) == root / "meteor" / "meteor-1.5.jar"
    with pytest.raises(JavaUnavailable, match=r"missing from the pycocoevalcap package$") as exc:
        coco_java.jar("meteor/absent.jar")
    assert str(root / "meteor" / "absent.jar") in str(exc.value)
    with pytest.raises(JavaUnavailable):
        coco_java.jar("meteor")


def test_java_on_path(fake: Fake, monkeypatch: pytest.MonkeyPatch) -> None:
    assert coco_java._java() == str(fake.java)
    assert coco_java.java_reason() is None
    monkeypatch.setenv("PATH", str(fake.log))
    with pytest.raises(JavaUnavailable, match=r"^no java executable on PATH"):
        coco_java._java()
    assert coco_java.java_reason() == "no java executable on PATH (install Debian's default-jre-headless)"


@pytest.mark.parametrize("missing", ["tokenizer/stanford-corenlp-3.4.1.jar", "meteor/meteor-1.5.jar"])
def test_java_reason_names_the_missing_jar(fake: Fake, missing: str) -> None:
    (fake.pkg / missing).unlink()
    assert coco_java.java_reason() == f"{fake.pkg / missing} is missing from the pycocoevalcap package"
    with pytest.raises(JavaUnavailable, match=r"is missing"):
        if missing.startswith("meteor"):
            Meteor().score(["a"], [["r"]])
        else:
            coco_java.ptb_java_tokens(["a"])
    assert fake.starts() == [] and fake.ptb_calls() == []
