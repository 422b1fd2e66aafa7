"""pycocoevalcap's two Java tools, run as pycocoevalcap 1.2 runs them: the Stanford PTB tokenizer of CoreNLP 3.4.1
(one ``java`` process per batch of texts) and METEOR 1.5 (one long-lived ``java -jar meteor-1.5.jar -stdio`` per
process, started on first use, never at import, and shared under a lock).

Both jars ship in the pycocoevalcap wheel (a runtime dependency); Java itself is optional (Debian's
``default-jre-headless``). Without it every function here raises :class:`JavaUnavailable` with the reason, and the
scorers report METEOR as null with that reason.
"""

import atexit
import importlib.util
import os
import selectors
import shutil
import subprocess
import tempfile
import threading
from collections.abc import Sequence
from pathlib import Path

from service.scoring.ptb_tokenizer import CONTEXT_AFTER, LINE_BREAKS, PTB_PUNCTUATION

PTB_JAR = "tokenizer/stanford-corenlp-3.4.1.jar"
METEOR_JAR = "meteor/meteor-1.5.jar"
PTB_COMMAND = ("edu.stanford.nlp.process.PTBTokenizer", "-preserveLines", "-lowerCase")
METEOR_COMMAND = ("-jar", "-Xmx2G", "meteor-1.5.jar", "-", "-", "-stdio", "-l", "en", "-norm")
METEOR_VERSION = "METEOR 1.5 (meteor-1.5.jar of pycocoevalcap 1.2, -l en -norm)"
PTB_TIMEOUT_S = 120.0
METEOR_START_TIMEOUT_S = 300.0
METEOR_LINE_TIMEOUT_S = 60.0


class JavaUnavailable(RuntimeError):
    """Java or a jar is missing, or the Java process failed; the message says which."""


def _package_dir() -> Path:
    spec = importlib.util.find_spec("pycocoevalcap")
    if spec is None or not spec.submodule_search_locations:
        raise JavaUnavailable("the pycocoevalcap package (which ships the jars) is not installed")
    return Path(next(iter(spec.submodule_search_locations)))


def _java() -> str:
    java = shutil.which("java")
    if java is None:
        raise JavaUnavailable("no java executable on PATH (install Debian's default-jre-headless)")
    return java


def jar(relative: str) -> Path:
    """A jar of the pycocoevalcap package; raises :class:`JavaUnavailable` when absent."""
    path = _package_dir() / relative
    if not path.is_file():
        raise JavaUnavailable(f"{path} is missing from the pycocoevalcap package")
    return path


def java_reason() -> str | None:
    """Why Java scoring cannot run here, or None when java and both jars are present."""
    try:
        _java()
        jar(PTB_JAR)
        jar(METEOR_JAR)
    except JavaUnavailable as exc:
        return str(exc)
    return None


def ptb_java_tokens(texts: Sequence[str]) -> list[list[str]]:
    """Tokens of each text from the CoreNLP 3.4.1 jar (``PTBTokenizer -preserveLines -lowerCase`` on a file of one
    text per line, as pycocoevalcap's tokenizer/ptbtokenizer.py), then its punctuation filter.

    Each text is followed by a line holding a NUL character, so no text's tokens depend on the next one (see
    :mod:`service.scoring.ptb_tokenizer`); line breaks inside a text become spaces.
    """
    if not texts:
        return []
    body = "".join(LINE_BREAKS.sub(" ", t) + CONTEXT_AFTER + "\n" for t in texts)
    java, path = _java(), jar(PTB_JAR)
    with tempfile.NamedTemporaryFile("wb", suffix=".txt") as handle:
        handle.write(body.encode("utf-8", "surrogatepass"))
        handle.flush()
        try:
            done = subprocess.run(
                [java, "-cp", str(path), *PTB_COMMAND, handle.name],
                capture_output=True,
                timeout=PTB_TIMEOUT_S,
                check=False,
            )
        except subprocess.TimeoutExpired as exc:
            raise JavaUnavailable(f"the PTB tokenizer took longer than {PTB_TIMEOUT_S:.0f} s") from exc
    lines = done.stdout.decode("utf-8", "replace").split("\n")
    if done.returncode != 0 or len(lines) < 2 * len(texts):
        raise JavaUnavailable(f"the PTB tokenizer failed (exit {done.returncode}): {done.stderr[-300:]!r}")
    return [
        [w for w in line.rstrip().split(" ") if w and w not in PTB_PUNCTUATION] for line in lines[0::2][: len(texts)]
    ]


class Meteor:
    """One ``java -jar meteor-1.5.jar - - -stdio -l en -norm`` process (pycocoevalcap's meteor/meteor.py protocol:
    a ``SCORE ||| refs ||| hypothesis`` line per item returns its statistics, then ``EVAL ||| stats ||| ...``
    returns each item's METEOR and the corpus METEOR). Started on first use; calls are serialised by a lock."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._proc: subprocess.Popen | None = None
        self._owner = 0
        self._buffer = b""

    @property
    def started(self) -> bool:
        """Whether this process already holds a running METEOR JVM (the next call pays no start-up)."""
        return self._proc is not None and self._proc.poll() is None and self._owner == os.getpid()

    def _start(self) -> subprocess.Popen:
        path = jar(METEOR_JAR)
        proc = subprocess.Popen(
            [_java(), *METEOR_COMMAND],
            cwd=path.parent,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
        )
        self._proc, self._owner, self._buffer = proc, os.getpid(), b""
        atexit.register(self.close)
        return proc

    def _readline(self, proc: subprocess.Popen, timeout: float) -> str:
        assert proc.stdout is not None
        fd = proc.stdout.fileno()
        with selectors.DefaultSelector() as sel:
            sel.register(fd, selectors.EVENT_READ)
            while b"\n" not in self._buffer:
                if not sel.select(timeout):
                    raise JavaUnavailable(f"METEOR did not answer within {timeout:.0f} s")
                chunk = os.read(fd, 1 << 16)
                if not chunk:
                    raise JavaUnavailable("the METEOR process ended")
                self._buffer += chunk
        line, self._buffer = self._buffer.split(b"\n", 1)
        return line.decode("utf-8", "replace").strip()

    def _write(self, proc: subprocess.Popen, line: str) -> None:
        assert proc.stdin is not None
        proc.stdin.write((line + "\n").encode("utf-8", "surrogatepass"))
        proc.stdin.flush()

    def score(self, hypotheses: Sequence[str], references: Sequence[Sequence[str]]) -> tuple[float, list[float]]:
        """(corpus METEOR, per-item METEOR) of tokenised hypothesis strings against their reference strings."""
        with self._lock:
            first = not self.started
            proc = self._start() if first else self._proc
            assert proc is not None
            try:
                stats = []
                for k, (hyp, refs) in enumerate(zip(hypotheses, references, strict=True)):
                    hyp = hyp.replace("|||", "").replace("  ", " ")
                    self._write(proc, " ||| ".join(("SCORE", " ||| ".join(refs), hyp)))
                    timeout = METEOR_START_TIMEOUT_S if first and k == 0 else METEOR_LINE_TIMEOUT_S
                    stats.append(self._readline(proc, timeout))
                self._write(proc, "EVAL ||| " + " ||| ".join(stats))
                items = [float(self._readline(proc, METEOR_LINE_TIMEOUT_S)) for _ in stats]
                return float(self._readline(proc, METEOR_LINE_TIMEOUT_S)), items
            except (OSError, ValueError, JavaUnavailable) as exc:
                self._stop()
                raise JavaUnavailable(f"METEOR failed: {exc}") from exc

    def _stop(self) -> None:
        proc, self._proc = self._proc, None
        if proc is not None and self._owner == os.getpid():
            proc.kill()
            proc.wait()

    def close(self) -> None:
        """Stop the JVM (at interpreter exit)."""
        with self._lock:
            self._stop()


METEOR = Meteor()
"""This process's METEOR JVM (not started until :meth:`Meteor.score` is first called)."""
