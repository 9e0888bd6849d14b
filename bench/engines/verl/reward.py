"""VERL's reward function for acebench runs: acebench's own strict grader decides, so the reward that trains is the
grade the report counts.

VERL calls `compute_score(data_source, solution_str, ground_truth, extra_info)` (custom_reward_function.name) once
per response, from its reward managers' executor threads (`naive`, `dapo`, and the reward loop's managers of v0.7.0).
Each process starts one grader, `bench/engines/verl/reward_serve.ts` under Deno (through `grader.sh` beside this
file, written with the run's plan; or the JSON argv in ACE_VERL_GRADER), and sends it JSON lines: a batch of {prediction, gold} out,
the batch's verdicts back. The grader grades in strict mode (explicit answer markers only: \\boxed{}, "Answer:",
"final answer is") with the same pool and per-answer timeout as `deno task grade --strict`; nothing about answers
is decided here.

    compute_score         {"score": 1.0 | -1.0, "acc": bool, "pred": str}   (rewardScheme pm1, math_dapo's scale)
    compute_score_binary  {"score": 1.0 | 0.0,  "acc": bool, "pred": str}   (rewardScheme binary)

`grade_batch(pairs)` grades many (response, gold) pairs in one round trip (the parity test and batch callers).
A grader that cannot start, dies or stalls is an error naming the command and its last stderr lines, never a silent
0 reward. A grader that dies or stalls is restarted once per process and the request retried; a second failure
raises the first one's error. Each restart is one line on stderr and, in a run folder (grader.sh beside this file),
one JSON line in grader_restarts.jsonl beside it, which ingest counts into the run's status.json. Each request has a wall-clock bound (ACE_VERL_GRADER_TIMEOUT_S, default 60 s, plus
2.5 s per response: the grader's own per-answer limit is 2 s, so a batch of timeouts still answers). No verdicts
are cached: sampled responses almost never repeat, and a cache of them costs memory, not time.
"""

import atexit
import collections
import datetime
import json
import os
import queue
import socket
import subprocess
import sys
import threading

GRADER_ENV = "ACE_VERL_GRADER"
TIMEOUT_ENV = "ACE_VERL_GRADER_TIMEOUT_S"
GRADER_SCRIPT = "grader.sh"
RESTARTS_FILE = "grader_restarts.jsonl"
_PER_RESPONSE_S = 2.5
_STDERR_LINES = 20


class GraderError(RuntimeError):
    """The grader process failed: exited, stalled past its bound, or answered out of protocol."""


class _Grader:
    """One grader process and its pipes, shared by the threads of this process (one request at a time).

    Two daemon threads read its stdout (into a queue, so a read can time out) and its stderr (its last lines
    kept for error messages, so a chatty grader never blocks on a full pipe)."""

    def __init__(self, argv):
        self.argv = argv
        self.proc = subprocess.Popen(
            argv,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            encoding="utf-8",
            bufsize=1,
        )
        self.lines = queue.Queue()
        self.stderr = collections.deque(maxlen=_STDERR_LINES)
        threading.Thread(target=self._pump, args=(self.proc.stdout, self.lines.put), daemon=True).start()
        threading.Thread(target=self._pump, args=(self.proc.stderr, self.stderr.append), daemon=True).start()

    @staticmethod
    def _pump(stream, sink):
        for line in stream:
            sink(line)
        sink("")  # end of stream; the deque ignores it in messages

    def _fail(self, what):
        self.kill()
        err = " | ".join(line.strip() for line in self.stderr if line.strip())
        return GraderError(f"reward: the grader ({' '.join(self.argv)}) {what}: {err or 'no message'}")

    def grade(self, pairs, timeout_s):
        """Verdicts for `pairs`; raises GraderError when the grader exits, stalls past timeout_s or answers wrong."""
        request = json.dumps([{"prediction": p, "gold": g} for p, g in pairs], ensure_ascii=False)
        try:
            self.proc.stdin.write(request + "\n")
            self.proc.stdin.flush()
        except (BrokenPipeError, OSError):
            raise self._fail("exited") from None
        try:
            line = self.lines.get(timeout=timeout_s)
        except queue.Empty:
            raise self._fail(f"answered nothing in {timeout_s:.0f} s for {len(pairs)} responses") from None
        if not line:
            self.proc.wait(timeout=5)
            raise self._fail(f"exited with code {self.proc.returncode}")
        verdicts = json.loads(line)
        if len(verdicts) != len(pairs):
            raise self._fail(f"answered {len(verdicts)} verdicts for {len(pairs)} responses")
        return verdicts

    def kill(self):
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()

    def close(self):
        if self.proc.poll() is None:
            self.proc.stdin.close()
            try:
                self.proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.kill()


_state = {"pid": None, "grader": None, "restarted": False}
_state_lock = threading.Lock()
_request_lock = threading.Lock()


def _grader_argv():
    raw = os.environ.get(GRADER_ENV)
    if not raw:
        script = os.path.join(os.path.dirname(os.path.abspath(__file__)), GRADER_SCRIPT)
        if not os.path.exists(script):
            raise RuntimeError(f"reward: neither {GRADER_ENV} nor {script} (written with the run's plan) exists")
        return ["bash", script]
    argv = json.loads(raw)
    if not isinstance(argv, list) or not argv or not all(isinstance(a, str) for a in argv):
        raise RuntimeError(f"reward: {GRADER_ENV} must be a JSON array of strings, got {raw!r}")
    return argv


def _timeout_s(n):
    raw = os.environ.get(TIMEOUT_ENV, "60")
    try:
        base = float(raw)
    except ValueError:
        raise RuntimeError(f"reward: {TIMEOUT_ENV} must be a number of seconds, got {raw!r}") from None
    return base + _PER_RESPONSE_S * n


def _grader(fresh=False):
    """This process's grader, started on first use (a forked child starts its own); `fresh` replaces it."""
    with _state_lock:
        if fresh or _state["pid"] != os.getpid() or _state["grader"] is None:
            if _state["pid"] != os.getpid():
                _state["restarted"] = False
            _state["grader"] = _Grader(_grader_argv())
            _state["pid"] = os.getpid()
            atexit.register(_state["grader"].close)
        return _state["grader"]


def _log_restart(error):
    """Say on stderr that this process restarts its grader, and append it to the run's grader_restarts.jsonl."""
    print(f"reward: restarting the grader (pid {os.getpid()}) after: {error}", file=sys.stderr, flush=True)
    here = os.path.dirname(os.path.abspath(__file__))
    if not os.path.exists(os.path.join(here, GRADER_SCRIPT)):
        return  # not a run folder's copy (tests import the source tree's)
    record = {
        "time": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "host": socket.gethostname(),
        "pid": os.getpid(),
        "error": str(error)[:2000],
    }
    # one short write in append mode: lines of concurrent processes do not interleave
    with open(os.path.join(here, RESTARTS_FILE), "a", encoding="utf-8") as f:
        f.write(json.dumps(record, ensure_ascii=False) + "\n")


def grade_batch(pairs):
    """Strict verdicts {correct, status, extracted} for (response, gold) pairs, in order.

    A failed grader is restarted once per process and the request retried; a second failure raises the first
    error (with the retry's appended)."""
    pairs = [(str(p), str(g)) for p, g in pairs]
    if not pairs:
        return []
    with _request_lock:
        try:
            return _grader().grade(pairs, _timeout_s(len(pairs)))
        except GraderError as first:
            if _state["restarted"]:
                raise
            _state["restarted"] = True
            _log_restart(first)
            try:
                return _grader(fresh=True).grade(pairs, _timeout_s(len(pairs)))
            except GraderError as second:
                raise GraderError(f"{first} (restarted once; the restarted grader failed too: {second})") from first


def _result(solution_str, ground_truth, wrong_score):
    verdict = grade_batch([(solution_str, _gold(ground_truth))])[0]
    acc = bool(verdict["correct"])
    return {"score": 1.0 if acc else wrong_score, "acc": acc, "pred": verdict["extracted"] or ""}


def _gold(ground_truth):
    # VERL's parquet rows carry reward_model.ground_truth as one string; a list (some datasets) takes the first.
    if isinstance(ground_truth, (list, tuple)) and ground_truth:
        return str(ground_truth[0])
    return str(ground_truth)


def compute_score(data_source, solution_str, ground_truth, extra_info=None, **kwargs):
    """+1 if acebench's strict grade is correct, else -1 (the RL core's pm1 scheme); `acc` and `pred` as math_dapo's."""
    return _result(solution_str, ground_truth, -1.0)


def compute_score_binary(data_source, solution_str, ground_truth, extra_info=None, **kwargs):
    """1 if acebench's strict grade is correct, else 0 (the RL core's binary scheme)."""
    return _result(solution_str, ground_truth, 0.0)
