#pragma once
// Dense row-major matrix: the standard numeric array type of Gemflow.
#include <cstddef>
#include <cstdint>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "gemflow/memory.hpp"

namespace gemflow {

/// Dense matrix, row-major, `rows × cols`, element (i, j) at `data[i * cols + j]`.
/// Values travel between nodes as `std::shared_ptr<const Matrix<T>>`; a device copy may be
/// attached later (see DeviceBuffer) so that chained GPU nodes skip the host.
/// Allocations of 256 MiB or more are checked against the available host memory first
/// (gemflow/memory.hpp): one that cannot fit throws OutOfMemory naming the shape.
template <class T>
class Matrix {
 public:
  Matrix() = default;
  Matrix(std::size_t rows, std::size_t cols, T fill = T{})
      : rows_(rows), cols_(cols), data_((checked_matrix_bytes(rows, cols, sizeof(T)), rows * cols), fill) {}
  Matrix(std::size_t rows, std::size_t cols, std::vector<T> data) : rows_(rows), cols_(cols), data_(std::move(data)) {
    if (cols_ != 0 && rows_ > data_.max_size() / cols_) throw std::invalid_argument("Matrix: rows*cols overflows");
    if (data_.size() != rows_ * cols_) throw std::invalid_argument("Matrix: data size != rows*cols");
  }
  Matrix(const Matrix& o)
      : rows_(o.rows_), cols_(o.cols_), data_((checked_matrix_bytes(o.rows_, o.cols_, sizeof(T)), o.data_)) {}
  Matrix& operator=(const Matrix& o) {
    if (this != &o) {
      if (o.data_.size() > data_.capacity()) checked_matrix_bytes(o.rows_, o.cols_, sizeof(T));
      data_ = o.data_;
      rows_ = o.rows_;
      cols_ = o.cols_;
    }
    return *this;
  }
  Matrix(Matrix&&) noexcept = default;
  Matrix& operator=(Matrix&&) noexcept = default;
  ~Matrix() = default;

  [[nodiscard]] std::size_t rows() const noexcept { return rows_; }
  [[nodiscard]] std::size_t cols() const noexcept { return cols_; }
  [[nodiscard]] std::size_t size() const noexcept { return data_.size(); }
  [[nodiscard]] bool empty() const noexcept { return data_.empty(); }

  T& operator()(std::size_t i, std::size_t j) noexcept { return data_[i * cols_ + j]; }
  const T& operator()(std::size_t i, std::size_t j) const noexcept { return data_[i * cols_ + j]; }

  [[nodiscard]] T* data() noexcept { return data_.data(); }
  [[nodiscard]] const T* data() const noexcept { return data_.data(); }
  [[nodiscard]] std::span<T> span() noexcept { return data_; }
  [[nodiscard]] std::span<const T> span() const noexcept { return data_; }
  [[nodiscard]] std::span<T> row(std::size_t i) noexcept { return {data_.data() + i * cols_, cols_}; }
  [[nodiscard]] std::span<const T> row(std::size_t i) const noexcept { return {data_.data() + i * cols_, cols_}; }

 private:
  std::size_t rows_ = 0, cols_ = 0;
  std::vector<T> data_;
};

using MatrixF64 = Matrix<double>;
using MatrixF32 = Matrix<float>;

}  // namespace gemflow
