"""ACE (asymmetric confidence penalties) as a VERL advantage estimator.

The math mirrors acebench's TypeScript RL core (bench/core/advantages.ts and bench/core/ace.ts):

    A_i  = (r_i - mean_g) / (std_g + eps)          GRPO outcome advantage (Bessel std; Dr. GRPO: no division)
    c_i  = sum_t mask * (old_log_prob - ref_log_prob)   (or the per-token mean), optionally clipped
    A'_i = A_i * (1 + alpha * phi(c_i))            only where rollout i is incorrect and A_i < 0

VERL's estimator hook receives only token_level_rewards, response_mask, config and index, not the log-probs,
so `install()` wraps `verl.trainer.ppo.ray_trainer.compute_advantage` (VERL 0.7.0's and 0.9.0's trainers, the V1
trainer of 0.9.0 included, call it from there): for `algorithm.adv_estimator=ace` the
wrapper computes c_i from the batch's `old_log_probs` and `ref_log_prob` and hands it to the registered estimator
through a context variable. Options come from environment variables (set through the Ray runtime env), because
VERL validates `algorithm` against a fixed dataclass:

    ACE_VERL_ALPHA (1.0)  ACE_VERL_PHI (softplus|relu)  ACE_VERL_AGGREGATION (sum|mean)  ACE_VERL_CLIP (none|float)

Load it in every Ray worker with `ray_kwargs.ray_init.runtime_env.worker_process_setup_hook=ace_verl.install`;
install() imports nothing from VERL, it patches VERL's modules as they are first imported. With
ACE_VERL_METRICS_FILE set, every GRPO-family advantage call (grpo or ace) inside a trainer's fit() also appends
the RL core's ACE diagnostics (overconfident-error share, their mean c, the penalty multiplier) as one JSON line
at the trainer's global step.

New estimators: a function with VERL's estimator signature, an entry in ESTIMATORS, and (if it needs c_i)
in _NEEDS_ACE_INPUTS; overrides.ts maps the RL core's method to the name.
"""

import contextlib
import contextvars
import functools
import importlib.abc
import inspect
import json
import math
import os
import re
import sys
from dataclasses import dataclass
from typing import Optional

import torch

ACE_NAME = "ace"
_PHIS = ("softplus", "relu")
_AGGREGATIONS = ("sum", "mean")


@dataclass(frozen=True)
class AceOptions:
    """ACE options; `clip` bounds |c_i| (None: no clip)."""

    alpha: float = 1.0
    phi: str = "softplus"
    aggregation: str = "sum"
    clip: Optional[float] = None

    def __post_init__(self):
        if not (self.alpha >= 0 and math.isfinite(self.alpha)):
            raise ValueError(f"ACE_VERL_ALPHA is {self.alpha}; expected a finite number >= 0")
        if self.phi not in _PHIS:
            raise ValueError(f"ACE_VERL_PHI is '{self.phi}'; expected one of {', '.join(_PHIS)}")
        if self.aggregation not in _AGGREGATIONS:
            raise ValueError(f"ACE_VERL_AGGREGATION is '{self.aggregation}'; expected one of {', '.join(_AGGREGATIONS)}")
        if self.clip is not None and not (self.clip > 0 and math.isfinite(self.clip)):
            raise ValueError(f"ACE_VERL_CLIP is {self.clip}; expected a positive number or 'none'")

    @classmethod
    def from_env(cls, env=None):
        """Read ACE_VERL_* variables (missing ones keep the defaults)."""
        env = os.environ if env is None else env
        clip = env.get("ACE_VERL_CLIP", "none").strip().lower()
        return cls(
            alpha=_float_env(env, "ACE_VERL_ALPHA", 1.0),
            phi=env.get("ACE_VERL_PHI", "softplus").strip(),
            aggregation=env.get("ACE_VERL_AGGREGATION", "sum").strip(),
            clip=None if clip in ("", "none", "null") else _float_env(env, "ACE_VERL_CLIP", 0.0),
        )


def _float_env(env, name, default):
    text = env.get(name)
    if text is None or text.strip() == "":
        return default
    try:
        return float(text)
    except ValueError:
        raise ValueError(f"{name} is '{text}'; expected a number") from None


def softplus(x: torch.Tensor) -> torch.Tensor:
    """Stable log(1 + e^x): exact for large |x| (torch's own softplus switches to x above a threshold)."""
    return torch.clamp(x, min=0) + torch.log1p(torch.exp(-torch.abs(x)))


def phi_of(c: torch.Tensor, phi: str) -> torch.Tensor:
    """phi(c): softplus(c) or max(c, 0)."""
    return softplus(c) if phi == "softplus" else torch.clamp(c, min=0)


def confidence_shift(old_log_prob, ref_log_prob, response_mask, aggregation="sum", clip=None) -> torch.Tensor:
    """c_i = sum_t mask*(old - ref) per row (`mean`: divided by the token count, 0 for an empty row), in float64."""
    mask = response_mask.to(torch.float64)
    total = (mask * (old_log_prob.to(torch.float64) - ref_log_prob.to(torch.float64))).sum(dim=-1)
    if aggregation == "mean":
        count = mask.sum(dim=-1)
        total = torch.where(count > 0, total / count.clamp(min=1), torch.zeros_like(total))
    if clip is not None:
        total = total.clamp(-clip, clip)
    return total


def group_advantages(scores: torch.Tensor, index, norm_by_std=True, eps=1e-6) -> torch.Tensor:
    """GRPO outcome advantage per rollout (float64): singleton group -> A = r; all-equal group -> exactly 0."""
    scores = scores.to(torch.float64)
    adv = torch.zeros_like(scores)
    groups = {}
    for i, uid in enumerate(_as_list(index)):
        groups.setdefault(uid, []).append(i)
    for members in groups.values():
        idx = torch.tensor(members, dtype=torch.long, device=scores.device)
        r = scores[idx]
        if len(members) == 1:
            adv[idx] = r
            continue
        if bool((r == r[0]).all()):
            continue  # no signal; avoids (0 / eps) noise from float rounding of the mean
        mean = r.mean()
        scale = r.std(unbiased=True) + eps if norm_by_std else 1.0
        adv[idx] = (r - mean) / scale
    return adv


def ace_advantages(advantages: torch.Tensor, incorrect: torch.Tensor, c: torch.Tensor, options: AceOptions):
    """A' = A*(1 + alpha*phi(c)) where the rollout is incorrect and A < 0; A elsewhere."""
    c = c.to(device=advantages.device, dtype=torch.float64)
    multiplier = 1.0 + options.alpha * phi_of(c, options.phi)
    penalised = incorrect.to(device=advantages.device, dtype=torch.bool) & (advantages < 0)
    return torch.where(penalised, advantages * multiplier, advantages)


@dataclass
class AceInputs:
    """What the call-site wrapper hands the estimator: per-rollout c_i, the incorrect mask, and the call site's
    `norm_adv_by_std_in_grpo` (DAPO's trainer passes only that keyword, no `config`)."""

    c: torch.Tensor
    incorrect: torch.Tensor
    norm_by_std: bool = True


_current_inputs = contextvars.ContextVar("ace_verl_inputs", default=None)
_options = None


def options() -> AceOptions:
    """The process's ACE options, read from the environment once; unset variables are an error, not defaults."""
    global _options
    if _options is None:
        if "ACE_VERL_ALPHA" not in os.environ:
            raise RuntimeError(
                "ace: ACE_VERL_ALPHA is not set in this worker; pass the ACE_VERL_* variables through "
                "ray_kwargs.ray_init.runtime_env.env_vars (acebench's launch plan does)"
            )
        _options = AceOptions.from_env()
        print(f"ace_verl: {_options}", file=sys.stderr)
    return _options


def compute_ace_outcome_advantage(token_level_rewards, response_mask, config=None, index=None, **_unused):
    """The registered `ace` estimator: GRPO outcome advantage, then ACE's rescale of incorrect rollouts."""
    inputs = _current_inputs.get()
    if inputs is None:
        raise RuntimeError(
            "ace estimator called without c_i: ace_verl.install() must run in this process "
            "(ray_kwargs.ray_init.runtime_env.worker_process_setup_hook=ace_verl.install)"
        )
    if index is None:
        raise RuntimeError("ace estimator needs the prompt uid as `index` (VERL passes non_tensor_batch['uid'])")
    scores = token_level_rewards.sum(dim=-1)
    adv = group_advantages(scores, index, norm_by_std=inputs.norm_by_std)
    adv = ace_advantages(adv, inputs.incorrect, inputs.c, options())
    per_token = adv.to(token_level_rewards.dtype).unsqueeze(-1) * response_mask.to(token_level_rewards.dtype)
    return per_token, per_token


def compute_w_reinforce_outcome_advantage(token_level_rewards, response_mask, config=None, index=None, **_unused):
    """W-REINFORCE (Zhu et al. 2025, negative-sample reinforcement): A = lambda for a correct rollout (score > 0,
    as VERL's hook sees only rewards), -1 otherwise; no baseline. lambda: ACE_VERL_W_REINFORCE_LAMBDA."""
    lam = _float_env(os.environ, "ACE_VERL_W_REINFORCE_LAMBDA", 0.1)
    scores = token_level_rewards.sum(dim=-1)
    adv = torch.where(scores > 0, torch.full_like(scores, lam), torch.full_like(scores, -1.0))
    per_token = adv.unsqueeze(-1) * response_mask.to(token_level_rewards.dtype)
    return per_token, per_token


W_REINFORCE_NAME = "w_reinforce"


def _config_get(config, key, default):
    if config is None:
        return default
    if isinstance(config, dict):
        return config.get(key, default)
    getter = getattr(config, "get", None)
    if callable(getter):
        return getter(key, default)
    return getattr(config, key, default)


def _as_list(index):
    return index.tolist() if hasattr(index, "tolist") else list(index)


def _estimator_name(adv_estimator) -> str:
    return str(getattr(adv_estimator, "value", adv_estimator))


# VERL 0.9.0's V1 trainer hands compute_advantage no reward extras; the wrapper of its _compute_advantage puts
# the verifier's verdicts here (row order of the batch), read from TransferQueue.
_v1_verdicts = contextvars.ContextVar("ace_verl_v1_verdicts", default=None)

NO_VERDICT = (
    "the reward function must return the verifier's verdict as 'acc' (acebench's reward.py does); ACE never "
    "infers correctness from the score's sign (a correct answer cut by DAPO's overlong penalty scores 0)"
)


def incorrect_mask(data) -> torch.Tensor:
    """Incorrect rollouts by the verifier's verdict: `acc` from the reward manager (VERL 0.7.0 puts it into the
    batch; on 0.9.0 the V1 trainer wrapper reads it from TransferQueue). No verdict is an error, never a guess."""
    rewards = data.batch["token_level_rewards"]
    acc = data.non_tensor_batch.get("acc") if hasattr(data, "non_tensor_batch") else None
    if acc is None:
        acc = _v1_verdicts.get()
        if acc is None:
            raise RuntimeError(f"ace: the batch carries no verifier verdict ('acc'): {NO_VERDICT}")
    acc = _as_list(acc)
    if len(acc) != rewards.shape[0]:
        raise RuntimeError(f"ace: {len(acc)} verdicts for a batch of {rewards.shape[0]} rollouts")
    missing = [i for i, a in enumerate(acc) if a is None]
    if missing:
        raise RuntimeError(f"ace: rollouts {missing[:5]} have no verifier verdict ('acc'): {NO_VERDICT}")
    return torch.tensor([not bool(a) for a in acc], dtype=torch.bool, device=rewards.device)


def verdicts_from_extra_fields(keys, extra_fields) -> list:
    """Each trajectory's `acc` from the `extra_fields.reward_extra_info` VERL 0.9.0's agent loop stores in
    TransferQueue (None where it has none; incorrect_mask names those)."""
    out = []
    for _key, extra in zip(keys, extra_fields, strict=True):
        extra = getattr(extra, "data", extra)  # TransferQueue may hand back a NonTensorData wrapper
        info = extra.get("reward_extra_info") if isinstance(extra, dict) else None
        acc = info.get("acc") if isinstance(info, dict) else None
        out.append(None if acc is None else bool(acc))
    return out


def ace_inputs(data, opts: AceOptions, norm_by_std: bool = True) -> AceInputs:
    """c_i from the batch's old and reference log-probs (both present at advantage time in VERL's fit loop)."""
    keys = set(data.batch.keys())
    for key in ("old_log_probs", "ref_log_prob", "response_mask"):
        if key not in keys:
            hint = (
                " (ACE needs a reference policy: set actor_rollout_ref.actor.use_kl_loss=True, kl_loss_coef=0)"
                if key == "ref_log_prob"
                else ""
            )
            raise RuntimeError(f"ace: batch has no '{key}'{hint}")
    c = confidence_shift(
        data.batch["old_log_probs"], data.batch["ref_log_prob"], data.batch["response_mask"], opts.aggregation, opts.clip
    )
    return AceInputs(c=c, incorrect=incorrect_mask(data), norm_by_std=norm_by_std)


def diagnostics(scores, incorrect, adv_before, adv_after, c):
    """The RL core's trainingDiagnostics fields computable at advantage time (bench/core/diagnostics.ts):
    reward_mean, accuracy, adv_abs_mean, and over incorrect rollouts ace_overconf_frac (share with c > 0),
    ace_overconf_mean_c (their mean c) and ace_multiplier (mean A'/A where A < 0); None where undefined."""
    scores, adv_before, adv_after = (t.to(torch.float64) for t in (scores, adv_before, adv_after))
    wrong = incorrect.to(device=scores.device, dtype=torch.bool)
    n_wrong = int(wrong.sum())
    out = {
        "reward_mean": float(scores.mean()),
        "accuracy": float((~wrong).to(torch.float64).mean()),
        "adv_abs_mean": float(adv_after.abs().mean()),
        "ace_overconf_frac": None,
        "ace_overconf_mean_c": None,
        "ace_multiplier": None,
    }
    if c is not None:
        overconf = wrong & (c.to(scores.device) > 0)
        out["ace_overconf_frac"] = float(overconf.sum()) / n_wrong if n_wrong else None
        out["ace_overconf_mean_c"] = float(c.to(torch.float64)[overconf].mean()) if bool(overconf.any()) else None
    penalised = wrong & (adv_before < 0)
    if bool(penalised.any()):
        out["ace_multiplier"] = float((adv_after[penalised] / adv_before[penalised]).mean())
    return out




# --- estimators this module adds to VERL: name -> function, registered with core_algos.register_adv_est ----------
ESTIMATORS = {ACE_NAME: compute_ace_outcome_advantage, W_REINFORCE_NAME: compute_w_reinforce_outcome_advantage}
# Estimators whose call needs c_i and the incorrect mask from the batch (the wrapper computes them).
_NEEDS_ACE_INPUTS = (ACE_NAME,)
# GRPO-family estimators whose advantage calls log the RL core's diagnostics.
_GROUP_ESTIMATORS = ("grpo", ACE_NAME)

# The trainer whose fit() is running in this thread: diagnostics take its global_steps (VERL puts no step into
# the batch at advantage time, and a resumed run restarts any counter of ours).
_current_trainer = contextvars.ContextVar("ace_verl_trainer", default=None)


@contextlib.contextmanager
def trainer_context(trainer):
    """Within the block, diagnostics are logged at `trainer.global_steps` (fit() runs inside one)."""
    token = _current_trainer.set(trainer)
    try:
        yield trainer
    finally:
        _current_trainer.reset(token)


def _log_diagnostics(data, name, inputs, norm_by_std):
    """Append this step's diagnostics to $ACE_VERL_METRICS_FILE (one JSON line; the driver is one process)."""
    path = os.environ.get("ACE_VERL_METRICS_FILE")
    if not path or name not in _GROUP_ESTIMATORS:
        return
    trainer = _current_trainer.get()
    step = getattr(trainer, "global_steps", None)
    if step is None:
        print("ace_verl: diagnostics not logged: compute_advantage ran outside a trainer's fit()", file=sys.stderr)
        return
    batch = data.batch
    mask = batch["response_mask"].to(torch.float64)
    scores = batch["token_level_rewards"].sum(dim=-1)
    adv_after = (batch["advantages"].to(torch.float64) * mask).sum(dim=-1) / mask.sum(dim=-1).clamp(min=1)
    if inputs is not None:
        c, incorrect = inputs.c, inputs.incorrect
        adv_before = group_advantages(scores, data.non_tensor_batch["uid"], norm_by_std=norm_by_std)
    else:
        has_ref = "ref_log_prob" in batch.keys() and "old_log_probs" in batch.keys()
        c = confidence_shift(batch["old_log_probs"], batch["ref_log_prob"], mask) if has_ref else None
        incorrect, adv_before = incorrect_mask(data), adv_after
    record = {"step": int(step), "estimator": name, **diagnostics(scores, incorrect, adv_before, adv_after, c)}
    with open(path, "a") as f:
        f.write(json.dumps(record) + "\n")


def _norm_by_std(original, args, kwargs) -> bool:
    """The call's norm_adv_by_std_in_grpo: the keyword (as VERL's GRPO branch reads it), else config, else True."""
    try:
        bound = inspect.signature(original).bind_partial(*args, **kwargs).arguments
    except TypeError:
        bound = kwargs
    if bound.get("norm_adv_by_std_in_grpo") is not None:
        return bool(bound["norm_adv_by_std_in_grpo"])
    return bool(_config_get(bound.get("config"), "norm_adv_by_std_in_grpo", True))


def _wrap_compute_advantage(original):
    def compute_advantage(data, adv_estimator, *args, **kwargs):
        name = _estimator_name(adv_estimator)
        norm_by_std = _norm_by_std(original, (data, adv_estimator, *args), kwargs)
        inputs = ace_inputs(data, options(), norm_by_std) if name in _NEEDS_ACE_INPUTS else None
        token = _current_inputs.set(inputs)
        try:
            result = original(data, adv_estimator, *args, **kwargs)
        finally:
            _current_inputs.reset(token)
        try:
            _log_diagnostics(data, name, inputs, norm_by_std)
        except Exception as e:  # diagnostics must never stop training; say so each time
            print(f"ace_verl: diagnostics not logged: {type(e).__name__}: {e}", file=sys.stderr)
        return result

    compute_advantage.__wrapped__ = original
    compute_advantage._ace_verl = True
    return compute_advantage


def finished_step(trainer):
    """The checkpointed step when the trainer's latest checkpoint already reaches its last step, else None.

    VERL's fit() resumes from the latest checkpoint, then validates and trains one more step before it checks
    `global_steps >= total_training_steps`: a finished run started again would train past its step count. Only
    resume_mode auto (acebench's) is considered; a relative checkpoint folder is resolved as VERL does."""
    cfg = trainer.config.trainer
    if cfg.get("resume_mode", "auto") != "auto" or cfg.get("default_hdfs_dir") is not None:
        return None
    from verl.utils.checkpoint.checkpoint_manager import find_latest_ckpt_path

    folder = os.path.join(os.getcwd(), cfg.default_local_dir)
    path = find_latest_ckpt_path(folder)
    total = getattr(trainer, "total_training_steps", None)
    if path is None or total is None:
        return None
    step = int(os.path.basename(os.path.normpath(path)).split("global_step_")[-1])
    return step if step >= total else None


def _wrap_fit(fit):
    @functools.wraps(fit)
    def wrapped(self, *args, **kwargs):
        done = finished_step(self)
        if done is not None:
            print(
                f"ace_verl: checkpoint global_step_{done} reaches total_training_steps "
                f"({self.total_training_steps}): nothing left to train",
                file=sys.stderr,
                flush=True,
            )
            return None
        with trainer_context(self):
            return fit(self, *args, **kwargs)

    wrapped._ace_verl = True
    return wrapped


# --- patches, applied when VERL imports each module (or at once if it already has) --------------------------------


def _patch_core_algos(core_algos):
    registry = getattr(core_algos, "ADV_ESTIMATOR_REGISTRY", {})
    for name, fn in ESTIMATORS.items():
        if registry.get(name) is not fn:
            core_algos.register_adv_est(name)(fn)


def _patch_trainer_classes(module):
    """Wrap fit() of the trainer classes a module defines, so diagnostics know the step."""
    for value in list(vars(module).values()):
        if isinstance(value, type) and value.__module__ == module.__name__ and "fit" in vars(value):
            if not getattr(value.fit, "_ace_verl", False):
                value.fit = _wrap_fit(value.fit)


def _patch_ray_trainer(ray_trainer):
    from verl.trainer.ppo import core_algos  # ray_trainer imported it first

    _patch_core_algos(core_algos)
    current = ray_trainer.compute_advantage
    if not getattr(current, "_ace_verl", False):
        patched = _wrap_compute_advantage(current)
        # Modules that imported compute_advantage by name before now (e.g. a recipe trainer) are rebound too.
        for module in list(sys.modules.values()):
            # the module's own dict, not getattr: lazy modules (transformers) import submodules on attribute access
            if module is not None and getattr(module, "__dict__", {}).get("compute_advantage") is current:
                module.compute_advantage = patched
    _patch_trainer_classes(ray_trainer)


def _patch_recipe_trainer(module):
    """DAPO's trainer imports compute_advantage by name from ray_trainer (patched by then) and has its own fit()."""
    _patch_trainer_classes(module)


def _json_scalar(value):
    """numpy/torch scalars as Python numbers (json's `default`); anything else stays an error."""
    if hasattr(value, "item") and getattr(value, "ndim", 0) == 0:
        return value.item()
    raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")


def _patch_tracking(tracking):
    """VERL's file logger (trainer.logger=[...,"file"]) writes each step with json.dumps, which fails on the numpy
    int32 that v0.7.0's agent loop puts into num_turns metrics (the run dies at its first validation); write numpy
    scalars as numbers, and flush each line so a crash keeps the steps before it."""
    cls = getattr(tracking, "FileLogger", None)
    if cls is None or getattr(cls.log, "_ace_verl", False):
        return

    def log(self, data, step):
        self.fp.write(json.dumps({"step": step, "data": data}, default=_json_scalar) + "\n")
        self.fp.flush()

    log._ace_verl = True
    cls.log = log


def _wrap_v1_compute_advantage(original):
    """PPOTrainer._compute_advantage of VERL 0.9's V1 trainer fetches only uid, masks, rm_scores and log-probs
    from TransferQueue: fetch the verifier's verdicts too (same keys, same row order) for incorrect_mask."""

    @functools.wraps(original)
    def _compute_advantage(self, batch, metrics):
        import transfer_queue as tq

        data = tq.kv_batch_get(keys=batch.keys, partition_id=batch.partition_id, select_fields=["extra_fields"])
        token = _v1_verdicts.set(verdicts_from_extra_fields(batch.keys, list(data["extra_fields"])))
        try:
            return original(self, batch, metrics)
        finally:
            _v1_verdicts.reset(token)

    _compute_advantage._ace_verl = True
    return _compute_advantage


# --- DAPO's round cap on VERL 0.9's Sync DAPO, which has none ------------------------------------------------
# VERL 0.7.0's DAPO trainer generates gen_batch_size prompts per round and raises after max_num_gen_batches rounds
# without a full batch of informative groups. 0.9.0's replay buffer refills evicted groups from a wrapping
# dataloader with no cap: an all-uniform stream samples until killed. acebench counts the prompts each step
# dispatches (the step's batch and every refill) and stops at ACE_VERL_DAPO_MAX_ROUNDS x ACE_VERL_DAPO_GEN_BATCH.


@dataclass
class DapoBudget:
    """One step's generation budget: prompts dispatched so far at `step`, of `rounds` x `gen_batch`."""

    rounds: int
    gen_batch: int
    step: Optional[int] = None
    dispatched: int = 0
    refused: int = 0

    @property
    def limit(self) -> int:
        return self.rounds * self.gen_batch

    def start(self, step):
        """A new step: nothing dispatched yet."""
        self.step, self.dispatched, self.refused = step, 0, 0

    def grant(self, wanted: int) -> int:
        """How many of `wanted` prompts may still go out this step (the rest are counted as refused)."""
        allowed = max(0, min(wanted, self.limit - self.dispatched))
        self.dispatched += allowed
        self.refused += wanted - allowed
        return allowed

    def exhausted_message(self, informative: int, needed: int) -> str:
        return (
            f"dynamic sampling: only {informative}/{needed} informative groups at step {self.step} after "
            f"{self.dispatched} prompts ({self.rounds} rounds x {self.gen_batch} prompts, algo.dynamicSampling."
            f"maxRounds; onExhausted 'error'): every other group had one verdict for all its rollouts"
        )


def dapo_budget_from_env(env=None) -> Optional[DapoBudget]:
    """The budget ACE_VERL_DAPO_MAX_ROUNDS / ACE_VERL_DAPO_GEN_BATCH name (None when unset: no cap)."""
    env = os.environ if env is None else env
    rounds, gen = env.get("ACE_VERL_DAPO_MAX_ROUNDS"), env.get("ACE_VERL_DAPO_GEN_BATCH")
    if rounds is None and gen is None:
        return None
    if rounds is None or gen is None:
        raise RuntimeError("ace_verl: set both ACE_VERL_DAPO_MAX_ROUNDS and ACE_VERL_DAPO_GEN_BATCH, or neither")
    values = {}
    for name, text in (("ACE_VERL_DAPO_MAX_ROUNDS", rounds), ("ACE_VERL_DAPO_GEN_BATCH", gen)):
        if not re.fullmatch(r"[1-9][0-9]*", text.strip()):
            raise RuntimeError(f"ace_verl: {name} is '{text}'; expected a positive integer")
        values[name] = int(text)
    return DapoBudget(values["ACE_VERL_DAPO_MAX_ROUNDS"], values["ACE_VERL_DAPO_GEN_BATCH"])


def _trainer_budget(trainer) -> Optional[DapoBudget]:
    """The trainer's budget, made on first use: only under filter groups (DAPO) with the variables set."""
    if not hasattr(trainer, "_ace_dapo_budget"):
        fg = trainer.config.algorithm.get("filter_groups", None)
        enabled = bool(fg is not None and fg.get("enable", False))
        trainer._ace_dapo_budget = dapo_budget_from_env() if enabled else None
        replay_buffer = getattr(trainer, "replay_buffer", None)
        if replay_buffer is not None:
            replay_buffer._ace_dapo_budget = trainer._ace_dapo_budget
    return trainer._ace_dapo_budget


def _wrap_v1_add_batch(original):
    """The step's first dispatch (one train batch of prompts) opens the step's budget."""

    @functools.wraps(original)
    def _add_batch_to_generate(self, *args, **kwargs):
        budget = _trainer_budget(self)
        if budget is not None:
            budget.start(self.global_steps)
            budget.grant(self.config.data.train_batch_size)
        return original(self, *args, **kwargs)

    _add_batch_to_generate._ace_verl = True
    return _add_batch_to_generate


def _wrap_v1_refill(original):
    """The replay buffer's refill: only what the step's budget still allows goes out."""

    @functools.wraps(original)
    def _add_prompts_to_generate(self, num_prompts):
        budget = _trainer_budget(self)
        if budget is None:
            return original(self, num_prompts)
        allowed = budget.grant(num_prompts)
        return original(self, allowed) if allowed > 0 else 0

    _add_prompts_to_generate._ace_verl = True
    return _add_prompts_to_generate


def _patch_v1_trainer(module):
    """VERL 0.9's V1 trainer (main_ppo's default, and its Sync DAPO): PPOTrainer.fit runs every step; its
    advantage call goes through verl.trainer.ppo.v1.utils, which imported the patched compute_advantage by name.
    Its _compute_advantage gets the verifier's verdicts; its dispatches are counted against DAPO's budget."""
    _patch_trainer_classes(module)
    cls = module.PPOTrainer
    for name, wrap in (
        ("_compute_advantage", _wrap_v1_compute_advantage),
        ("_add_batch_to_generate", _wrap_v1_add_batch),
        ("_add_prompts_to_generate", _wrap_v1_refill),
    ):
        if not getattr(vars(cls)[name], "_ace_verl", False):
            setattr(cls, name, wrap(vars(cls)[name]))


def _wrap_wait_for_next_poll(original):
    """Sync DAPO waits for in-flight groups between polls: with the step's budget spent and nothing in flight,
    no batch can fill any more, so the run fails here, naming the counts."""

    @functools.wraps(original)
    def _wait_for_next_poll(self, partition_id, last_debug_time):
        budget = getattr(self, "_ace_dapo_budget", None)
        if budget is not None and partition_id != "val" and budget.dispatched >= budget.limit:
            inflight = len(self.pending_keys[partition_id]) + len(self.running_keys[partition_id])
            if inflight == 0:
                informative = len(self.finished_keys[partition_id] | self.failure_keys[partition_id])
                raise RuntimeError(budget.exhausted_message(informative, self.train_batch_size))
        return original(self, partition_id, last_debug_time)

    _wait_for_next_poll._ace_verl = True
    return _wait_for_next_poll


def _wrap_sample(original):
    """A prompt group whose generation or reward raised ends as "failure" in VERL 0.9's agent loop, and the sync
    ReplayBuffer samples what is left of it (the batch is padded, validation dumps lose samples). acebench fails
    the run at the first such group instead, in training and in validation."""

    @functools.wraps(original)
    def sample(self, global_steps, partition_id, batch_size):
        batch, metrics = original(self, global_steps=global_steps, partition_id=partition_id, batch_size=batch_size)
        failed = self.failure_keys[partition_id]
        if failed:
            what = "validation" if partition_id == "val" else "training"
            raise RuntimeError(
                f"ace_verl: {len(failed)} prompt group(s) of {what} at step {global_steps} failed in VERL's agent "
                f"loop (a generation or reward error: the agent-loop worker's log names it); VERL would go on with "
                f"the rollouts left, acebench fails the run"
            )
        return batch, metrics

    sample._ace_verl = True
    return sample


def _patch_replay_buffer(module):
    """VERL 0.9's sync ReplayBuffer: DAPO's budget check where it would wait for more groups, and no training or
    validation on the remains of failed groups."""
    cls = module.ReplayBuffer
    for name, wrap in (("_wait_for_next_poll", _wrap_wait_for_next_poll), ("sample", _wrap_sample)):
        if not getattr(vars(cls)[name], "_ace_verl", False):
            setattr(cls, name, wrap(vars(cls)[name]))


def _job_namespace(namespace):
    """TransferQueue's fixed namespace, scoped to this Ray job (others pass through)."""
    if namespace != "transfer_queue":
        return namespace
    import ray

    return f"transfer_queue-{ray.get_runtime_context().get_job_id()}"


def _patch_transfer_queue(interface):
    """TransferQueue (VERL 0.9's data plane) starts its controller as the named actor "TransferQueueController" in
    the namespace "transfer_queue", which is cluster-wide: a second VERL job on the same Ray cluster finds the first
    job's controller, trains on its data and config, and loses it when that job ends. Each job gets its own
    namespace instead (the controller's creation and every lookup of it)."""
    if getattr(interface.TransferQueueController, "_ace_verl", False):
        return
    import ray

    controller = interface.TransferQueueController

    class JobScopedRay:
        _ace_verl = True

        def __getattr__(self, name):
            return getattr(ray, name)

        def get_actor(self, name, namespace=None):
            return ray.get_actor(name, namespace=_job_namespace(namespace))

    class JobScopedController:
        _ace_verl = True

        def __getattr__(self, name):
            return getattr(controller, name)

        def options(self, **kwargs):
            if "namespace" in kwargs:
                kwargs["namespace"] = _job_namespace(kwargs["namespace"])
            return controller.options(**kwargs)

    interface.ray, interface.TransferQueueController = JobScopedRay(), JobScopedController()


# Module → (patch, the VERL releases it applies to). VERL 0.7.0: ray_trainer (main_ppo) and the DAPO recipe's
# trainer; 0.9.0: the V1 trainer too. 0.9.0's FileLogger already writes numpy scalars (orjson, to a file opened
# "wb", unbuffered): the 0.7.0 patch, which writes str, would crash it at the first step.
_PATCHES = {
    "verl.trainer.ppo.core_algos": (_patch_core_algos, ("0.7.0", "0.9.0")),
    "verl.trainer.ppo.ray_trainer": (_patch_ray_trainer, ("0.7.0", "0.9.0")),
    "recipe.dapo.dapo_ray_trainer": (_patch_recipe_trainer, ("0.7.0",)),
    "verl.trainer.ppo.v1.trainer_base": (_patch_v1_trainer, ("0.9.0",)),
    "verl.trainer.ppo.v1.replay_buffer": (_patch_replay_buffer, ("0.9.0",)),
    "verl.utils.tracking": (_patch_tracking, ("0.7.0",)),
    # None: a package of its own (VERL 0.9's dependency), imported while `verl` itself is still importing
    "transfer_queue.interface": (_patch_transfer_queue, None),
}


def _verl_release():
    """The running VERL's release (verl.__version__; importing a verl submodule has imported the package)."""
    version = str(getattr(sys.modules.get("verl"), "__version__", ""))
    match = re.match(r"\d+\.\d+\.\d+", version)  # 0.7.0's source tree says "0.7.0.dev"
    return match.group(0) if match else version or None


def _apply(name, module):
    """Apply the patch of `name` if it applies to the running release; an unknown release is an error, since a
    patch written for one release can break another silently."""
    patch, releases = _PATCHES[name]
    if releases is None:
        patch(module)
        return
    release = _verl_release()
    if release not in ("0.7.0", "0.9.0"):
        raise RuntimeError(f"ace_verl: VERL {release} is not a supported release (0.7.0, 0.9.0)")
    if release in releases:
        patch(module)


class _PatchingLoader(importlib.abc.Loader):
    """Runs the module's own loader, then its patch."""

    def __init__(self, loader, name):
        self._loader, self._name = loader, name

    def create_module(self, spec):
        return self._loader.create_module(spec)

    def exec_module(self, module):
        self._loader.exec_module(module)
        _apply(self._name, module)

    def __getattr__(self, name):  # get_source, get_resource_reader, …: the module's own loader answers
        return getattr(self._loader, name)


class _PatchOnImport(importlib.abc.MetaPathFinder):
    """Finds the patched modules through the other finders and wraps their loader."""

    def find_spec(self, name, path, target=None):
        if name not in _PATCHES:
            return None
        for finder in sys.meta_path:
            if finder is self or not hasattr(finder, "find_spec"):
                continue
            spec = finder.find_spec(name, path, target)
            if spec is not None and spec.loader is not None:
                spec.loader = _PatchingLoader(spec.loader, name)
                return spec
        return None


def install():
    """Ray's worker_process_setup_hook: register `ace` and patch VERL's trainer modules when VERL imports them.

    Imports nothing from VERL here: `verl` initialises CUDA at import (verl/utils/device.py), and a worker
    that does so before Ray narrows CUDA_VISIBLE_DEVICES lands on GPU 0. Modules already imported are patched at
    once. Idempotent."""
    if not any(isinstance(f, _PatchOnImport) for f in sys.meta_path):
        sys.meta_path.insert(0, _PatchOnImport())
    for name in _PATCHES:
        module = sys.modules.get(name)
        if module is not None:
            _apply(name, module)
