"""peer_timing's peak GEMM probe sized as measure_peak_gemm sizes its own:
measure_gemm_size's rule, and a probe that grows from the smallest size
only as far as the rate it measured allows, so that a device slow at the
dtype (a CPU without bf16 instructions: about a minute for one
2048-cubed bf16 GEMM) costs a second of probing, not minutes. torch.mm is
replaced by a wait of the time a GEMM takes at a chosen rate. Run by
tests/e2e_peer.sh where torch imports."""
import os
import sys
import time
import unittest
from unittest import mock

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "bench", "peers"))

import peer_timing  # noqa: E402


def gemm_at(tflops, sizes):
    """A torch.mm that takes a square GEMM's time at `tflops`, noting its size."""
    def mm(a, b):
        sizes.append(a.shape[0])
        time.sleep(2.0 * a.shape[0] ** 3 / (tflops * 1e12))
        return a
    return mm


class PeakProbeTest(unittest.TestCase):
    def test_size_rule_is_measure_gemm_size(self):
        # cbrt(20 ms x 1 TFLOP/s / 2) = 2154: 2112, a multiple of 64
        self.assertEqual(peer_timing.gemm_size(1.0, 20.0, 8192), 2112)
        self.assertEqual(peer_timing.gemm_size(1.0, 20.0, 2048), 2048)
        self.assertEqual(peer_timing.gemm_size(0.001, 20.0, 8192), 512)

    def test_a_slow_dtype_is_probed_small_and_quickly(self):
        sizes = []
        t0 = time.perf_counter()
        with mock.patch("torch.mm", gemm_at(0.005, sizes)):  # 54 ms at 512, 3.4 s at 2048
            tflops, n = peer_timing.peak_gemm_tflops(torch.device("cpu"), "bf16", 2048)
        self.assertEqual(n, 512)
        self.assertEqual(set(sizes), {512})
        self.assertLess(time.perf_counter() - t0, 5)
        self.assertAlmostEqual(tflops, 0.005, delta=0.002)

    def test_a_fast_device_grows_to_its_cap(self):
        sizes = []
        with mock.patch("torch.mm", gemm_at(10.0, sizes)):  # 27 us at 512, 1.7 ms at 2048
            tflops, n = peer_timing.peak_gemm_tflops(torch.device("cpu"), "fp32", 2048)
        self.assertEqual(n, 2048)
        self.assertEqual(sizes[0], 512)


if __name__ == "__main__":
    unittest.main()
