#pragma once
// CudaExecutor: the executor contract of core/cpu_executor.h on CUDA kernels
// and CUB. Lambdas passed to for_each/reduce are EDDY_HD (nvcc
// --extended-lambda) and capture plain device pointers by value.
#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_reduce.cuh>
#include <cub/device/device_scan.cuh>
#include <cuda_runtime.h>

#include <cstdint>
#include <string>
#include <utility>

#include "eddy/core/error.h"
#include "eddy/core/reduce_ops.h"

namespace eddy::gpu {

inline void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) throw Error(std::string("CUDA error in ") + what + ": " + cudaGetErrorString(e));
}

// Device memory of n elements of T, as std::vector holds host memory: resize
// keeps the contents, zero-fills what it adds, and allocates only when n
// passes the capacity (which never shrinks), so the resizes of a step cost
// no cudaMalloc once the arrays have reached their size.
template <class T>
class DeviceVector {
 public:
  DeviceVector() = default;
  DeviceVector(const DeviceVector&) = delete;
  DeviceVector& operator=(const DeviceVector&) = delete;
  DeviceVector(DeviceVector&& o) noexcept { swap(o); }
  DeviceVector& operator=(DeviceVector&& o) noexcept {
    swap(o);
    return *this;
  }
  ~DeviceVector() {
    if (p_) cudaFree(p_);
  }
  void swap(DeviceVector& o) noexcept {
    std::swap(p_, o.p_);
    std::swap(n_, o.n_);
    std::swap(cap_, o.cap_);
  }
  friend void swap(DeviceVector& a, DeviceVector& b) noexcept { a.swap(b); }

  T* data() { return p_; }
  const T* data() const { return p_; }
  size_t size() const { return n_; }
  size_t capacity() const { return cap_; }
  void resize(size_t n) {
    if (n > cap_) {
      T* q = nullptr;
      check(cudaMalloc(&q, n * sizeof(T)), "cudaMalloc");
      if (n_) check(cudaMemcpy(q, p_, n_ * sizeof(T), cudaMemcpyDeviceToDevice), "resize copy");
      if (p_) cudaFree(p_);
      p_ = q;
      cap_ = n;
    }
    if (n > n_) check(cudaMemset(p_ + n_, 0, (n - n_) * sizeof(T)), "resize memset");
    n_ = n;
  }

 private:
  T* p_ = nullptr;
  size_t n_ = 0, cap_ = 0;
};

template <class F>
__global__ void for_each_kernel(uint32_t n, F f) {
  const uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) f(i);
}

template <class T, class Map>
__global__ void map_kernel(uint32_t n, Map map, T* out) {
  const uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = map(i);
}

class CudaExecutor {
 public:
  static constexpr const char* backend_name = "cuda";
  static constexpr bool on_device = true;  // see CpuExecutor::on_device
  template <class T>
  using Vector = DeviceVector<T>;

  CudaExecutor() = default;
  CudaExecutor(CudaExecutor&&) = default;

  template <class F>
  void for_each(uint32_t n, F f) const {
    if (n == 0) return;
    constexpr uint32_t block = 256;
    for_each_kernel<<<(n + block - 1) / block, block>>>(n, f);
    check(cudaGetLastError(), "for_each launch");
  }
  // The CPU's AVX2 dispatch has no meaning here: the same as for_each.
  template <class F>
  void for_each_simd(uint32_t n, F f) const {
    for_each(n, f);
  }

  template <class T, class Map, class Op>
  T reduce(uint32_t n, T init, Map map, Op op) const {
    if (n == 0) return init;
    T* vals = scratch<T>(values_, n);
    constexpr uint32_t block = 256;
    map_kernel<T><<<(n + block - 1) / block, block>>>(n, map, vals);
    check(cudaGetLastError(), "reduce map launch");
    T* out = scratch<T>(result_, 1);
    size_t bytes = 0;
    check(cub::DeviceReduce::Reduce(nullptr, bytes, vals, out, n, op, init), "DeviceReduce size");
    void* tmp = temp(bytes);
    check(cub::DeviceReduce::Reduce(tmp, bytes, vals, out, n, op, init), "DeviceReduce");
    T host;
    check(cudaMemcpy(&host, out, sizeof(T), cudaMemcpyDeviceToHost), "reduce result");
    return host;
  }

  uint32_t exclusive_scan(const uint32_t* in, uint32_t* out, uint32_t n) const {
    if (n == 0) return 0;
    uint32_t last_in = 0, last_out = 0;
    check(cudaMemcpy(&last_in, in + n - 1, 4, cudaMemcpyDeviceToHost), "scan last input");
    size_t bytes = 0;
    check(cub::DeviceScan::ExclusiveSum(nullptr, bytes, in, out, n), "DeviceScan size");
    void* tmp = temp(bytes);
    check(cub::DeviceScan::ExclusiveSum(tmp, bytes, in, out, n), "DeviceScan");
    check(cudaMemcpy(&last_out, out + n - 1, 4, cudaMemcpyDeviceToHost), "scan last output");
    return last_in + last_out;
  }

  void sort_by_key(uint64_t* keys, uint32_t* values, uint32_t n, int key_bits) const {
    if (n < 2 || key_bits <= 0) return;
    alt_keys_.resize(n > alt_keys_.size() ? n : alt_keys_.size());
    alt_values_.resize(n > alt_values_.size() ? n : alt_values_.size());
    cub::DoubleBuffer<uint64_t> k(keys, alt_keys_.data());
    cub::DoubleBuffer<uint32_t> v(values, alt_values_.data());
    size_t bytes = 0;
    check(cub::DeviceRadixSort::SortPairs(nullptr, bytes, k, v, n, 0, key_bits), "RadixSort size");
    void* tmp = temp(bytes);
    check(cub::DeviceRadixSort::SortPairs(tmp, bytes, k, v, n, 0, key_bits), "RadixSort");
    if (k.Current() != keys) {
      check(cudaMemcpy(keys, k.Current(), n * 8, cudaMemcpyDeviceToDevice), "sort copy keys");
      check(cudaMemcpy(values, v.Current(), n * 4, cudaMemcpyDeviceToDevice), "sort copy values");
    }
  }

  template <class T>
  void upload(Vector<T>& dst, const T* src, size_t n) const {
    dst.resize(n);
    if (n) check(cudaMemcpy(dst.data(), src, n * sizeof(T), cudaMemcpyHostToDevice), "upload");
  }
  template <class T>
  void download(const Vector<T>& src, T* dst, size_t n) const {
    EDDY_DEMAND(n <= src.size());
    if (n) check(cudaMemcpy(dst, src.data(), n * sizeof(T), cudaMemcpyDeviceToHost), "download");
  }

 private:
  template <class T>
  T* scratch(DeviceVector<unsigned char>& buf, size_t n) const {
    if (buf.size() < n * sizeof(T)) buf.resize(n * sizeof(T));
    return reinterpret_cast<T*>(buf.data());
  }
  void* temp(size_t bytes) const {
    if (temp_.size() < bytes) temp_.resize(bytes);
    return temp_.data();
  }

  mutable DeviceVector<unsigned char> values_, result_, temp_;
  mutable DeviceVector<uint64_t> alt_keys_;
  mutable DeviceVector<uint32_t> alt_values_;
};

}  // namespace eddy::gpu
