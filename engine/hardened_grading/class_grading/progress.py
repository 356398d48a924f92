"""Progress while a class is graded (a bar on a terminal, else a line per submission), and the summary at the end."""

import sys
import time

from ..untrusted.terminal import escape

PROGRAM = "hardened-grade"  #: the command, as its messages name it (a course may give it its own name)


def duration(seconds):
    minutes, seconds = divmod(round(seconds), 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours} h {minutes} min" if hours else f"{minutes} min {seconds} s" if minutes else f"{seconds} s"


class Progress:
    """A tqdm bar on a terminal (with the ``progress`` extra); otherwise one plain line per submission, with the
    rate and time left."""

    def __init__(self, total, stream=sys.stderr, to_skip=0):
        self.total, self.done, self.failed, self.stream = total, 0, 0, stream
        # The rate and the time left are of the submissions graded, not of those skipped (already graded,
        # `to_skip` of them foreseen), which take no time.
        self.to_skip, self.worked, self.skipped = to_skip, 0, 0
        self.started = time.monotonic()
        self.bar = None
        tqdm = _tqdm() if stream.isatty() else None
        if tqdm is not None:
            self.bar = tqdm(total=total, desc="grading", unit="submission", file=stream, dynamic_ncols=True,
                            bar_format="{l_bar}{bar}| {n_fmt}/{total_fmt} [{elapsed}<{remaining}, {rate_fmt}]{postfix}")

    def __call__(self, outcome):
        self.done += 1
        self.failed += outcome.status == "failed"
        if outcome.status == "skipped":
            self.skipped += 1
        else:
            self.worked += 1
        if self.bar is not None:
            postfix = ", ".join(part for part in (f"skipped: {self.skipped}" if self.skipped else "",
                                                  f"failed: {self.failed}" if self.failed else "") if part)
            self.bar.set_postfix_str(postfix, refresh=False)
            if outcome.status == "skipped":  # the bar counts, times and rates the graded ones only
                self.bar.total -= 1
                self.bar.refresh()
            else:
                self.bar.update(1)
            if outcome.status == "failed":
                self.bar.write(escape(f"{outcome.student}: FAILED: {outcome.reason}"), file=self.stream)
            for what, where, why in outcome.problems:
                self.bar.write(escape(f"{outcome.student}: {what}: {where}"), file=self.stream)
            return
        width = len(str(self.total))
        if outcome.status == "skipped":
            print(escape(f"[{self.done:>{width}}/{self.total}] {outcome.student}: already graded, skipped"),
                  file=self.stream, flush=True)
            return
        elapsed = time.monotonic() - self.started
        rate = self.worked / elapsed if elapsed else 0.0
        left = ((self.total - self.done) - max(0, self.to_skip - self.skipped)) / rate if rate else 0.0
        what = (f"graded in {outcome.seconds:.1f} s" if outcome.status == "graded" else f"FAILED: {outcome.reason}")
        what += "".join(f"; {problem}: {where}" for problem, where, _ in outcome.problems)
        print(escape(f"[{self.done:>{width}}/{self.total}] {outcome.student}: {what}  "
                     f"({rate:.2f}/s, {duration(left)} left)"), file=self.stream, flush=True)

    def close(self):
        if self.bar is not None:
            self.bar.close()


def _tqdm():
    """tqdm's bar, or None where the engine was installed without its ``progress`` extra (one line per submission)."""
    try:
        from tqdm import tqdm
    except ImportError:
        return None
    return tqdm


def summary(outcomes, seconds, jobs, log_path, assignment, shard=None, program=PROGRAM):
    """The end of a run: how many were graded, skipped and failed; every graded submission that could not
    be read, timed out, crashed its kernel or ran out of memory, with where and why; the log."""
    counts = {status: [o for o in outcomes if o.status == status] for status in ("graded", "skipped", "failed")}
    part = f" (shard {shard[0]}/{shard[1]})" if shard else ""
    worked = len(counts["graded"]) + len(counts["failed"])  # the rate is of those graded, not those skipped
    rate = f", {worked / seconds:.2f} graded per second" if seconds and worked else ""
    lines = [f"{program}: {len(outcomes)} submissions of {assignment}{part} in {duration(seconds)} with "
             f"{jobs} worker{'s' if jobs != 1 else ''}{rate}",
             f"  graded:  {len(counts['graded'])}"]
    troubled = sorted((o for o in counts["graded"] if o.problems), key=lambda o: o.student)
    if troubled:
        lines.append(f"    {len(troubled)} of them graded with a problem (their scores stand; look at them):")
        for outcome in troubled:
            for what, where, why in outcome.problems:
                lines.append(f"    {outcome.student}: {what}: {where}: {why}")
    if counts["skipped"]:
        lines.append(f"  skipped: {len(counts['skipped'])} already graded (--force grades them again)")
    lines.append(f"  failed:  {len(counts['failed'])}")
    lines += [f"    {o.student}: {o.reason}" for o in sorted(counts["failed"], key=lambda o: o.student)]
    lines.append(f"  log:     {log_path}")
    return "\n".join(escape(line) for line in lines)  # a reason or a problem may quote what a student wrote
