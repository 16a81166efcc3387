#include "kernels/cpu.h"

#include <cstdlib>
#include <string_view>

#include "core/error.h"

namespace eagle2 {

const char* kernel_path_name(KernelPath p) {
  switch (p) {
    case KernelPath::Scalar:
      return "scalar";
    case KernelPath::Avx2:
      return "avx2";
    case KernelPath::Avx512:
      return "avx512";
  }
  return "?";
}

bool cpu_has_avx512_bf16() {
  static const bool has = cpu_supports(KernelPath::Avx512) && __builtin_cpu_supports("avx512bf16");
  return has;
}

bool cpu_has_avx512_vnni() {
  static const bool has = cpu_supports(KernelPath::Avx512) && __builtin_cpu_supports("avx512vnni");
  return has;
}

bool cpu_supports(KernelPath p) {
#if defined(__x86_64__) || defined(__i386__)
  // libgcc's detection also checks XCR0, i.e. that the OS saves the wide registers.
  switch (p) {
    case KernelPath::Scalar:
      return true;
    case KernelPath::Avx2:
      return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") &&
             __builtin_cpu_supports("f16c");
    case KernelPath::Avx512:
      // The AVX-512 kernels also use AVX2/F16C instructions on 256-bit halves.
      return cpu_supports(KernelPath::Avx2) && __builtin_cpu_supports("avx512f") &&
             __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vl") &&
             __builtin_cpu_supports("avx512dq");
  }
  return false;
#else
  return p == KernelPath::Scalar;
#endif
}

KernelPath best_kernel_path() {
  static const KernelPath best = cpu_supports(KernelPath::Avx512) ? KernelPath::Avx512
                                 : cpu_supports(KernelPath::Avx2) ? KernelPath::Avx2
                                                                  : KernelPath::Scalar;
  return best;
}

KernelPath kernel_path_from_override(const char* value) {
  if (value == nullptr || *value == '\0') return best_kernel_path();
  const std::string_view v(value);
  KernelPath p;
  if (v == "scalar")
    p = KernelPath::Scalar;
  else if (v == "avx2")
    p = KernelPath::Avx2;
  else if (v == "avx512")
    p = KernelPath::Avx512;
  else
    fail("EAGLE2_KERNEL='", v, "' is not a kernel path (expected scalar, avx2 or avx512)");
  if (!cpu_supports(p))
    fail("EAGLE2_KERNEL=", v, " asks for a kernel path this CPU does not support (best here: ",
         kernel_path_name(best_kernel_path()), ")");
  return p;
}

KernelPath active_kernel_path() {
  // A throwing initializer leaves the static uninitialized, so a bad value fails every call.
  static const KernelPath active = kernel_path_from_override(std::getenv("EAGLE2_KERNEL"));
  return active;
}

}  // namespace eagle2
