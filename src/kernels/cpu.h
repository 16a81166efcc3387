// Which SIMD path the kernels take, chosen once at run time from CPUID. The environment variable
// EAGLE2_KERNEL=scalar|avx2|avx512 forces a path (a path the CPU lacks is an Error).
#pragma once

namespace eagle2 {

enum class KernelPath { Scalar, Avx2, Avx512 };

const char* kernel_path_name(KernelPath p);
bool cpu_supports(KernelPath p);
KernelPath best_kernel_path();    // the best the CPU supports
KernelPath active_kernel_path();  // best_kernel_path() unless EAGLE2_KERNEL overrides it

// AVX512-BF16 dot products (vdpbf16ps): the AVX-512 path uses them for bf16 weights when present.
bool cpu_has_avx512_bf16();
// AVX512-VNNI integer dot products (vpdpbusd): the AVX-512 path needs them for quantized weights
// (without them it runs the AVX2 quantized kernels, which give the same bits).
bool cpu_has_avx512_vnni();

// The path an EAGLE2_KERNEL value selects: null or empty means best_kernel_path(); an unknown name
// or a path this CPU lacks throws eagle2::Error. (active_kernel_path() applies it to the
// environment once and caches the answer; exposed for tests.)
KernelPath kernel_path_from_override(const char* value);

}  // namespace eagle2
