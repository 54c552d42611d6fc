"""The progress bar of amk.loop: tqdm's (terminal or notebook, tqdm.auto) when tqdm is
installed, else one line on stderr rewritten in place (only when stderr is a terminal)."""
import sys
import time


class _Line:
    """The fallback: `trial 12/100 [####      ] best 8.31 us  3.2s`."""

    def __init__(self, total, desc, stream):
        self.total, self.desc, self.stream = total, desc, stream
        self.n, self.best, self.t0, self.last = 0, None, time.monotonic(), 0.0

    def update(self, n, best):
        self.n, self.best = n, best
        now = time.monotonic()
        if now - self.last < 0.1 and (not self.total or n < self.total):
            return
        self.last = now
        width = 24
        if self.total:
            done = int(width * min(n, self.total) / self.total)
            bar = "[" + "#" * done + " " * (width - done) + "]"
            count = "%d/%d" % (n, self.total)
        else:
            bar, count = "", "%d" % n
        best = "best %.4g us" % best if best is not None else "no correct config yet"
        self.stream.write("\r%s trial %s %s %s  %.1fs " % (self.desc, count, bar, best,
                                                          now - self.t0))
        self.stream.flush()

    def close(self):
        self.stream.write("\n")
        self.stream.flush()


class _Tqdm:
    def __init__(self, tqdm, total, desc):
        self.bar = tqdm(total=total or None, desc=desc, unit="trial")
        self.n = 0

    def update(self, n, best):
        if n > self.n:
            self.bar.update(n - self.n)
            self.n = n
        if best is not None:
            self.bar.set_postfix_str("best %.4g us" % best, refresh=False)

    def close(self):
        self.bar.close()


class Progress:
    """Callable for the engine's progress callback
    (trial, budget, elapsed_s, time_limit_s, last_status, last_latency_us, best_us).
    enabled: True (tqdm, else a line on a terminal), False, or "line" (force the line)."""

    def __init__(self, desc, budget, enabled=True, stream=None):
        self.impl = None
        self.first = None
        stream = stream or sys.stderr
        if not enabled:
            return
        if enabled is True:
            try:
                from tqdm.auto import tqdm
                self.impl = _Tqdm(tqdm, budget, desc)
                return
            except ImportError:
                pass
            if not (hasattr(stream, "isatty") and stream.isatty()):
                return
        self.impl = _Line(budget, desc, stream)

    def __call__(self, trial, budget, elapsed_s, time_limit_s, status, latency_us, best_us):
        if self.first is None:
            self.first = trial - 1  # a resumed run numbers on from the file's last trial
        if self.impl:
            self.impl.update(trial - self.first, best_us)

    def close(self):
        if self.impl:
            self.impl.close()
            self.impl = None
