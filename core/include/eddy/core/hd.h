#pragma once
// EDDY_HD marks math that is compiled for the host and, under nvcc, for the
// device too: per-particle and per-cell functions are written once, here.
#if defined(__CUDACC__)
#define EDDY_HD __host__ __device__
#define EDDY_HD_INLINE __host__ __device__ __forceinline__
#else
#define EDDY_HD
#define EDDY_HD_INLINE inline
#endif
