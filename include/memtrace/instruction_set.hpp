#pragma once
// The instruction set a file is compiled for: part of what makes a build's floating-point numbers
// its own (checkpoints and results folders record it). See docs/design.md ("Versions").

#include <Eigen/Core>
#include <string>

namespace memtrace {

/// The instruction set this file is compiled for, and the SIMD sets Eigen's kernels use, e.g.
/// "avx2+fma (Eigen: AVX SSE, SSE2, ...)". Float sums round differently under each, so that runs of
/// two builds are never compared bit for bit, mixed or resumed. (Whether the compiler may fuse
/// multiplies and adds, -ffp-contract, is not visible here.)
[[nodiscard]] inline std::string instruction_set() {
#if defined(__AVX512F__)
  std::string name = "avx512";
#elif defined(__AVX2__) && defined(__FMA__)
  std::string name = "avx2+fma";
#elif defined(__AVX__)
  std::string name = "avx";
#elif defined(__x86_64__)
  std::string name = "sse2";
#else
  std::string name = "portable";
#endif
  return name + " (Eigen: " + Eigen::SimdInstructionSetsInUse() + ")";
}

}  // namespace memtrace
