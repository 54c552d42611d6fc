"""A model of gemm_hopper's ping-pong ring protocol (PERSISTENT 2, space_defs/kernels/
gemm_hopper/gemm_hopper.hip), run under random interleavings: one producer filling a
STAGES-deep ring tile by tile, two consumers of 4 warps each taking the tiles alternately,
TMA completions arriving late and out of order. mbarriers are modelled as PTX defines them:
an arrival count, a transaction count, and waits that name a phase only by its parity.

It checks what the GPU cannot show cheaply: every consumer warp reads the fill it expects,
no stage is refilled before its consumer released it, no barrier is over-arrived, nothing
hangs, with the kernel's turn-taking (order[w] barriers + the warpgroup sync after the wait);
and that the model sees the failures the H100 showed without them (launch failures and hangs
of the first version, 2026-11-26), so it would catch a protocol change that brings them back.
No GPU, no amk import."""
import random
import unittest


class Bar:
    def __init__(self, count):
        self.count, self.pend, self.tx, self.phase = count, count, 0, 0

    def _check(self):
        if self.pend == 0 and self.tx == 0:
            self.phase += 1
            self.pend = self.count

    def arrive(self):
        assert self.pend > 0, "over-arrival"
        self.pend -= 1
        self._check()

    def expect(self, nbytes):
        self.tx += nbytes
        self.arrive()

    def complete(self, nbytes):
        self.tx -= nbytes
        self._check()

    def ready(self, parity):  # mbarrier.try_wait.parity
        return (self.phase & 1) != parity


class Fail(Exception):
    pass


def run(ntiles, ktiles, stages, seed, order=True, wg_sync=True):
    """'ok' or 'hang'; raises Fail on a wrong read, an early refill or an over-arrival."""
    rnd = random.Random(seed)
    full = [Bar(1) for _ in range(stages)]
    empty = [Bar(4) for _ in range(stages)]  # 4 warps of the one consumer of a stage
    order_bar = [Bar(1), Bar(1)]
    wg = [[0, 0], [0, 0]]  # bar.sync 1+w, 128: arrivals, generation
    data = [None] * stages
    in_flight = []

    def arrive(bar):
        try:
            bar.arrive()
        except AssertionError as e:
            raise Fail(str(e))

    def producer():
        s, ph = 0, 0
        for i in range(ntiles):
            for kt in range(ktiles):
                while not empty[s].ready(ph ^ 1):
                    yield
                full[s].expect(1)
                in_flight.append((s, (i, kt)))
                s += 1
                if s == stages:
                    s, ph = 0, ph ^ 1
                yield

    def warp(w, wi):
        s, ph, order_ph = 0, 0, 0
        if w == 1:  # past the ring stages of the CTA's first tile
            s, ph = ktiles % stages, (ktiles // stages) & 1
        for i in range(w, ntiles, 2):
            if order and (w == 1 or i != w):
                while not order_bar[w].ready(order_ph):
                    yield
                order_ph ^= 1
                if wg_sync:
                    gen = wg[w][1]
                    wg[w][0] += 1
                    if wg[w][0] == 4:
                        wg[w][0], wg[w][1] = 0, gen + 1
                    while wg[w][1] == gen:
                        yield
            prev = None
            for kt in range(ktiles):
                while not full[s].ready(ph):
                    yield
                if data[s] != (i, kt):
                    raise Fail("consumer %d warp %d read fill %s for %s" % (w, wi, data[s], (i, kt)))
                yield  # the wgmmas read the stage
                if prev is not None:
                    if data[prev[0]] != prev[1]:
                        raise Fail("stage refilled before its release")
                    arrive(empty[prev[0]])
                prev = (s, (i, kt))
                s += 1
                if s == stages:
                    s, ph = 0, ph ^ 1
            if order and wi == 0:
                arrive(order_bar[1 - w])
            yield
            if data[prev[0]] != prev[1]:
                raise Fail("stage refilled before its release")
            arrive(empty[prev[0]])
            nx = s + ktiles  # skip the other consumer's next tile
            s, ph = nx % stages, ph ^ ((nx // stages) & 1)
            for _ in range(rnd.randint(0, 6)):  # the epilogue
                yield

    alive = [producer()] + [warp(w, wi) for w in range(2) for wi in range(4)]
    for _ in range(400000):
        if not alive and not in_flight:
            return "ok"
        if in_flight and (not alive or rnd.random() < 0.3):
            s, tag = in_flight.pop(rnd.randrange(len(in_flight)))
            data[s] = tag
            full[s].complete(1)
            continue
        a = rnd.choice(alive)
        try:
            next(a)
        except StopIteration:
            alive.remove(a)
    return "hang"


def cases(n):
    r = random.Random(20261126)
    for seed in range(n):
        yield r.randint(1, 12), r.randint(1, 12), r.randint(2, 6), seed


def outcome(*args, **kw):
    try:
        return run(*args, **kw)
    except Fail:
        return "fail"


class TestGemmHopperPingPong(unittest.TestCase):
    def test_pingpong_protocol_never_fails_or_hangs(self):
        for nt, kt, st, seed in cases(300):
            self.assertEqual(run(nt, kt, st, seed), "ok", (nt, kt, st, seed))

    def test_pingpong_protocol_model_sees_missing_turns(self):
        # Without order[]: a consumer takes the other's fill of a stage (same parity).
        self.assertTrue(any(outcome(nt, kt, st, seed, order=False) == "fail"
                            for nt, kt, st, seed in cases(100)))
        # Without the warpgroup sync: a lagging warp misses a phase when a tile has fewer
        # K steps than the ring has stages, and hangs.
        self.assertTrue(any(outcome(7, 1, 3, seed, wg_sync=False) == "hang"
                            for seed in range(100)))


if __name__ == "__main__":
    unittest.main()
