// Function multiversioning for hot loops: a function marked ANONCORE_CLONES is compiled twice, for AVX2 and for the
// baseline, and picked at load time (GCC/Clang on x86-64 Linux). Callers rely on both versions running the same IEEE
// operations element by element (no FMA contraction: AVX2 alone has none), so results are identical.
#pragma once

#if defined(__GNUC__) && defined(__x86_64__) && defined(__linux__) && !defined(ANONCORE_NO_MULTIVERSION)
#define ANONCORE_CLONES __attribute__((target_clones("avx2", "default")))
#else
#define ANONCORE_CLONES
#endif
