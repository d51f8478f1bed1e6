"""The workers of a corpus run: one file compacted and analyzed into a row
(:func:`process_file`, never raising), and the engines that run it over many files (in
this process, a spawn process pool whose workers die with their parent, or Ray)."""

from __future__ import annotations

import importlib
import multiprocessing
import os
import signal
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from typing import Any, Literal

from compactlens.analysis.compact_fixes import CompactFix, advise_compact
from compactlens.analysis.corpus_config import CorpusConfig, _summarizer
from compactlens.analysis.corpus_rows import CorpusRow, failed_row, row_from_report
from compactlens.analysis.facts import Fact
from compactlens.analysis.fix_verdicts import searched_advice
from compactlens.analysis.fixes import Fix
from compactlens.analysis.protocol import transcript_provider, verdict_provider
from compactlens.analysis.report import analyze
from compactlens.analysis.verdict import Verdict, verdict
from compactlens.engine.guards import DEFAULT_GUARDS, Guards
from compactlens.engine.index import MessageIndex
from compactlens.engine.result import CompactionResult
from compactlens.engine.run import run_strategy
from compactlens.engine.strategies.base import Strategy
from compactlens.engine.triggers import tokens_exceed
from compactlens.formats.caller import from_caller
from compactlens.model.errors import UsageError
from compactlens.model.messages import Message
from compactlens.model.tokens import Tokenizer, make_tokenizer
from compactlens.transcript import load_transcript

Engine = Literal["process", "ray"]
#: ``compact()``'s default "newest messages kept verbatim", for a configuration without one.
COMPACT_KEEP = 4
ENGINES: tuple[Engine, ...] = ("process", "ray")


def load_messages(path: Path, fmt: str | None = None) -> tuple[tuple[Message, ...], str]:
    """The messages of a transcript file and the name of its format.

    Uses :func:`compactlens.transcript.load_transcript` (every supported format).
    """
    transcript = load_transcript(path, format=fmt) if fmt else load_transcript(path)
    messages = tuple(transcript.messages)
    name = transcript.format
    return messages, str(name) if name else (fmt or "openai-chat")


def _counter(tokenizer: Tokenizer) -> Callable[[list[Any]], int]:
    """A ``count_tokens`` for ``compact()`` that counts like the engine does."""
    from compactlens.model.tokens import count_messages

    def count(items: list[Any]) -> int:
        return sum(count_messages(from_caller(items).messages, tokenizer))

    return count


def process_file(path: str, key: str, config: Mapping[str, Any]) -> CorpusRow:
    """Compact and analyze one file; every failure becomes a ``failed`` row (never raises)."""
    start = time.perf_counter()
    try:
        cfg = CorpusConfig.from_dict(config)
        messages, fmt = load_messages(Path(path), cfg.format)
        tokenizer = make_tokenizer(cfg.tokenizer)
        kwargs = cfg.analysis_kwargs()
        strategy = cfg.build_strategy()
        result: Any
        index: MessageIndex | None = None  # compact() mode's, when one is needed
        guards = DEFAULT_GUARDS.for_format(fmt)  # as `compactlens compact` runs the file
        if strategy is not None:
            from compactlens.engine.run import apply_compaction

            result = apply_compaction(messages, strategy, tokenizer, guards=guards)
            kwargs["triggers"] = strategy
        else:
            trigger_tokens = (cfg.compact or {}).get("trigger_tokens")
            # One index of the file for the trigger's test and the fix search, when either
            # needs it (compact() itself works on the messages).
            index = (
                MessageIndex.build(messages, tokenizer)
                if trigger_tokens is not None or cfg.fix_search
                else None
            )
            result = _run_compact(messages, cfg.compact or {}, tokenizer, index)
            if trigger_tokens is not None:
                kwargs["triggers"] = tokens_exceed(int(trigger_tokens))
        facts: dict[int, list[Fact]] = {}  # the conversation's facts, extracted once
        report = analyze(messages, result, tokenizer=tokenizer, fact_cache=facts, **kwargs)
        # Problems counted for the provider `compactlens compact` counts them for (the
        # transcript's own API, else its format's), when the analysis checked it.
        provider = verdict_provider(transcript_provider(messages), guards.provider)
        chosen = provider if provider in report.providers else None
        judged = verdict(result, report, provider=chosen)
        if strategy is not None and cfg.fix_search and judged.level != "safe":
            judged = advised_row(
                messages, strategy, guards, result, judged, tokenizer, kwargs, chosen, facts
            )
        elif (
            index is not None
            and cfg.compact is not None
            and cfg.fix_search
            and judged.level != "safe"
        ):
            analysis = {k: v for k, v in kwargs.items() if k != "triggers"}
            judged = advised_compact_row(index, cfg.compact, judged, analysis, chosen, facts)
        return row_from_report(key, fmt, report, (time.perf_counter() - start) * 1000.0, judged)
    except Exception as exc:  # recorded in the row; the run goes on
        return failed_row(key, exc, (time.perf_counter() - start) * 1000.0)


def _run_compact(
    messages: Sequence[Message],
    settings: Mapping[str, Any],
    tokenizer: Tokenizer,
    index: MessageIndex | None,
) -> Any:
    """``compact()`` with ``settings`` over ``messages``, as the inspector runs it: a
    history not over ``trigger_tokens`` is left as it is (an ``unchanged`` result), else
    compact() runs, counting as the engine and the inspector do (its default estimate
    measures the wire JSON, and the same file would read other token numbers).
    ``index``: the messages' index with ``tokenizer`` (given whenever a trigger is set)."""
    from compactlens.compact.contract import compact
    from compactlens.compact.explain import compact_over_index

    params = dict(settings)
    trigger = params.pop("trigger_tokens", None)
    if trigger is not None:
        index = index if index is not None else MessageIndex.build(messages, tokenizer)
        if index.total_tokens <= int(trigger):
            return compact_over_index(
                index,
                target_tokens=int(params["target_tokens"]),
                keep_last_messages=int(params.get("keep_last_messages", COMPACT_KEEP)),
                summarizer=_summarizer(),
                trigger_tokens=int(trigger),
                find_fixes=False,
            ).result
    params["count_tokens"] = _counter(tokenizer)
    return compact(messages, summarizer=_summarizer(), **params)


def advised_row(
    messages: Sequence[Message],
    strategy: Strategy,
    guards: Guards,
    result: CompactionResult,
    judged: Verdict,
    tokenizer: Tokenizer,
    analysis: Mapping[str, Any],
    provider: str | None,
    facts: dict[int, list[Fact]],
) -> Verdict:
    """``judged`` (a row's verdict) with the run's one next step, as ``compactlens
    compact``, ``debug()`` and the inspector give it (:func:`searched_advice`: the fix
    search), each fix judged as its own row would be (the same analysis settings and
    ``provider``; ``facts``: the row's fact cache, shared by every run of the file)."""
    index = MessageIndex.build(messages, tokenizer)

    def judge(fix: Fix) -> Fix:
        run = run_strategy(index, fix.strategy, guards=fix.guards, tokenizer_given=True)
        settings = {**analysis, "triggers": fix.strategy}
        report = analyze(messages, run, tokenizer=tokenizer, fact_cache=facts, **settings)
        return replace(fix, verdict=verdict(run, report, provider=provider))

    advised_verdict, _ = searched_advice(
        index, strategy, judged, guards=guards, summaries=result.summaries, judge=judge
    )
    return advised_verdict


def advised_compact_row(
    index: MessageIndex,
    settings: Mapping[str, Any],
    judged: Verdict,
    analysis: Mapping[str, Any],
    provider: str | None,
    facts: dict[int, list[Fact]],
) -> Verdict:
    """``judged`` (the row's verdict of a ``compact()`` call with ``settings``) with the
    run's one next step, as the inspector's ``compact()`` debugger gives it
    (:func:`search_compact_fixes`): each change of the settings run over the file's index
    and judged as its own row would be (the same ``analysis`` settings, ``provider`` and
    fact cache), the trigger as the analysis's triggers."""
    base = CompactFix(
        target_tokens=int(settings["target_tokens"]),
        keep_last_messages=int(settings.get("keep_last_messages", COMPACT_KEEP)),
        trigger_tokens=_trigger(settings.get("trigger_tokens")),
    )
    return advise_compact(
        index,
        base,
        summarizer=_summarizer(),
        analysis=analysis,
        provider=provider,
        facts=facts,
        current=judged,
    ).verdict


def _trigger(value: Any) -> int | None:
    return None if value is None else int(value)


def _default_jobs() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover - not Linux
        return max(1, os.cpu_count() or 1)


# ----------------------------------------------------------------------------- workers

_PR_SET_PDEATHSIG = 1  # linux/prctl.h


def _die_with_parent_signal() -> None:
    """Ask Linux to SIGKILL this process when its parent dies (no-op elsewhere)."""
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    except (OSError, AttributeError):  # pragma: no cover - not Linux
        pass


def _watch_parent(parent_pid: int, interval: float) -> None:
    while True:
        if os.getppid() != parent_pid:
            os._exit(1)  # the parent is gone: this worker's results have nowhere to go
        time.sleep(interval)


def worker_init(parent_pid: int, interval: float = 0.5) -> None:
    """Initializer of every corpus worker process.

    The worker ignores SIGINT (a Ctrl-C in a terminal goes to the whole process group;
    the parent alone handles it and stops the workers), dies with its parent (SIGKILL
    via ``PR_SET_PDEATHSIG`` on Linux) and, everywhere, exits within ``interval``
    seconds once its parent process is gone.
    """
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # discards a Ctrl-C held since the spawn
    if hasattr(signal, "pthread_sigmask"):
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})
    _die_with_parent_signal()
    if os.getppid() != parent_pid:  # the parent died before the request above
        os._exit(1)
    threading.Thread(
        target=_watch_parent, args=(parent_pid, interval), name="parent-watch", daemon=True
    ).start()


@contextmanager
def _spawning() -> Iterator[None]:
    """Hold SIGINT back while worker processes are spawned.

    A spawned worker imports compactlens before its initializer can ignore SIGINT; a
    Ctrl-C to the process group in that window would print a KeyboardInterrupt traceback
    from the worker. The signal mask is inherited across the spawn, so the worker starts
    with SIGINT blocked and :func:`worker_init` discards it; the parent receives a held
    Ctrl-C as soon as the block ends (the resource tracker of :mod:`multiprocessing`
    starts the same way).
    """
    if not hasattr(signal, "pthread_sigmask"):  # pragma: no cover - not POSIX
        yield
        return
    previous = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, previous)


def _new_pool(jobs: int, ctx: Any) -> ProcessPoolExecutor:
    return ProcessPoolExecutor(
        max_workers=jobs, mp_context=ctx, initializer=worker_init, initargs=(os.getpid(),)
    )


def _stop_pool(pool: ProcessPoolExecutor) -> None:
    """Cancel what has not started and terminate the workers now (on an interruption)."""
    # The executor keeps its worker processes in ``_processes`` (no public API before
    # Python 3.14's terminate_workers); without them shutdown would wait for every
    # running file.
    processes = list(getattr(pool, "_processes", {}).values())
    pool.shutdown(wait=False, cancel_futures=True)
    for proc in processes:
        if proc.is_alive():
            proc.terminate()
    for proc in processes:
        proc.join(timeout=5)
        if proc.is_alive():  # pragma: no cover - a worker that ignores SIGTERM
            proc.kill()
            proc.join(timeout=5)


def _run_inline(tasks: Sequence[tuple[str, str]], config: dict[str, Any], emit: Any) -> None:
    for path, key in tasks:
        emit(process_file(path, key, config))


Worker = Callable[[str, str, dict[str, Any]], CorpusRow]


def _run_processes(
    tasks: Sequence[tuple[str, str]],
    config: dict[str, Any],
    jobs: int,
    emit: Any,
    worker: Worker = process_file,
) -> None:
    """Run ``worker`` (a module-level function) over ``tasks`` in a spawn process pool."""
    ctx = multiprocessing.get_context("spawn")
    crashed: list[tuple[str, str]] = []
    pool = _new_pool(jobs, ctx)
    try:
        with _spawning():  # the pool spawns its workers as tasks are submitted
            pending: dict[Future[CorpusRow], tuple[str, str]] = {
                pool.submit(worker, path, key, config): (path, key) for path, key in tasks
            }
        while pending:
            done, _ = wait(pending, return_when=FIRST_COMPLETED)
            for fut in done:
                path, key = pending.pop(fut)
                try:
                    emit(fut.result())
                except BrokenProcessPool:
                    crashed.append((path, key))
                except Exception as exc:
                    emit(failed_row(key, exc))
    except BaseException:  # Ctrl-C, SIGTERM turned into an exception, an emit that failed
        _stop_pool(pool)
        raise
    pool.shutdown(wait=True)
    # A crashed worker takes every in-flight file with it: retry them one at a time in a
    # single-worker pool, started again only after a file really kills it.
    retry: ProcessPoolExecutor | None = None
    try:
        for path, key in crashed:
            if retry is None:
                retry = _new_pool(1, ctx)
            try:
                with _spawning():
                    future = retry.submit(worker, path, key, config)
                emit(future.result())
            except BrokenProcessPool:
                emit(failed_row(key, "the worker process died while processing this file"))
                retry.shutdown(wait=True)
                retry = None
            except Exception as exc:
                emit(failed_row(key, exc))
    except BaseException:
        if retry is not None:
            _stop_pool(retry)
            retry = None
        raise
    finally:
        if retry is not None:
            retry.shutdown(wait=True)


#: Environment defaults for a local Ray instance: no usage reporting, loopback only.
RAY_LOCAL_ENV: Mapping[str, str] = {
    "RAY_USAGE_STATS_ENABLED": "0",
    "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER": "0",
}


@contextmanager
def _env_defaults(values: Mapping[str, str]) -> Iterator[None]:
    """Set unset environment variables for the duration of the block, then restore them."""
    added = [k for k in values if k not in os.environ]
    for key in added:
        os.environ[key] = values[key]
    try:
        yield
    finally:
        for key in added:
            os.environ.pop(key, None)


def _run_ray(
    tasks: Sequence[tuple[str, str]],
    config: dict[str, Any],
    jobs: int,
    emit: Any,
    address: str | None = None,
) -> None:
    """Run on Ray: the instance already initialized, ``address`` (a cluster), or a new local
    instance on the loopback interface with ``jobs`` CPUs and usage stats off."""
    with _env_defaults(RAY_LOCAL_ENV if address is None else {"RAY_USAGE_STATS_ENABLED": "0"}):
        try:
            ray = importlib.import_module("ray")
        except ImportError:
            raise UsageError(
                "engine='ray' needs Ray: pip install 'compactlens[ray]' (or pip install ray)"
            ) from None
        started = False
        if not ray.is_initialized():
            if address is None:
                ray.init(num_cpus=jobs, include_dashboard=False, log_to_driver=False)
            else:
                ray.init(address=address, log_to_driver=False)
            started = True
    try:
        remote = ray.remote(num_cpus=1, max_retries=0)(process_file)
        refs = {remote.remote(path, key, config): key for path, key in tasks}
        while refs:
            done, _ = ray.wait(list(refs), num_returns=1)
            for ref in done:
                key = refs.pop(ref)
                try:
                    emit(ray.get(ref))
                except Exception as exc:  # a worker that died, or a Ray error
                    emit(failed_row(key, exc))
    finally:
        if started:
            ray.shutdown()
