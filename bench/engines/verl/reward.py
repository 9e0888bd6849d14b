"""VERL's reward function for acebench runs: acebench's own strict grader decides, so the reward that trains is the
grade the report counts.

VERL calls `compute_score(data_source, solution_str, ground_truth, extra_info)` (custom_reward_function.name) once
per response, from its reward managers' executor threads (`naive`, `dapo`, and the reward loop's managers of v0.7.0).
Each process starts one grader, `bench/engines/verl/reward_serve.ts` under Deno (through `grader.sh` beside this
file, written with the run's plan; or the JSON argv in ACE_VERL_GRADER), and sends it JSON lines: a batch of {prediction, gold} out,
the batch's verdicts back. The grader grades in strict mode (explicit answer markers only: \\boxed{}, "Answer:",
"final answer is") with the same pool and per-answer timeout as `deno task grade --strict`; nothing about answers
is decided here. Verdicts are cached per (response, gold) within a process.

    compute_score         {"score": 1.0 | -1.0, "acc": bool, "pred": str}   (rewardScheme pm1, math_dapo's scale)
    compute_score_binary  {"score": 1.0 | 0.0,  "acc": bool, "pred": str}   (rewardScheme binary)

`grade_batch(pairs)` grades many (response, gold) pairs in one round trip (the parity test and batch callers).
A grader that cannot start or dies is an error naming the command and its stderr, never a silent 0 reward.
"""

import atexit
import json
import os
import subprocess
import threading

GRADER_ENV = "ACE_VERL_GRADER"
GRADER_SCRIPT = "grader.sh"
_CACHE_MAX = 200_000


class _Grader:
    """One grader process and its pipe, shared by the threads of this process (one request at a time)."""

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
        self.lock = threading.Lock()

    def grade(self, pairs):
        request = json.dumps([{"prediction": p, "gold": g} for p, g in pairs], ensure_ascii=False)
        with self.lock:
            try:
                self.proc.stdin.write(request + "\n")
                self.proc.stdin.flush()
                line = self.proc.stdout.readline()
            except (BrokenPipeError, OSError):
                line = ""
            if not line:
                self.proc.kill()
                err = self.proc.stderr.read().strip()
                raise RuntimeError(f"reward: the grader ({' '.join(self.argv)}) exited: {err or 'no message'}")
        verdicts = json.loads(line)
        if len(verdicts) != len(pairs):
            raise RuntimeError(f"reward: the grader answered {len(verdicts)} verdicts for {len(pairs)} responses")
        return verdicts

    def close(self):
        if self.proc.poll() is None:
            self.proc.stdin.close()
            try:
                self.proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.proc.kill()


_state = {"pid": None, "grader": None}
_state_lock = threading.Lock()
_cache = {}


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


def _grader():
    """This process's grader, started on first use (a forked child starts its own)."""
    with _state_lock:
        if _state["pid"] != os.getpid() or _state["grader"] is None:
            _state["grader"] = _Grader(_grader_argv())
            _state["pid"] = os.getpid()
            _cache.clear()
            atexit.register(_state["grader"].close)
        return _state["grader"]


def grade_batch(pairs):
    """Strict verdicts {correct, status, extracted} for (response, gold) pairs, in order (cached per process)."""
    pairs = [(str(p), str(g)) for p, g in pairs]
    todo = sorted({pair for pair in pairs if pair not in _cache})
    if todo:
        for pair, verdict in zip(todo, _grader().grade(todo)):
            if len(_cache) >= _CACHE_MAX:
                _cache.clear()
            _cache[pair] = verdict
    return [_cache[pair] for pair in pairs]


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
