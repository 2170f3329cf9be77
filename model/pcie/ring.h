// ring.h - a FIFO on a power-of-two ring that only grows.
//
// The link's queues see millions of push/pop pairs; std::deque allocates and
// frees a block every few dozen of them, this reaches its high-water mark once
// and then never touches the heap again.
#pragma once

#include <cstddef>
#include <utility>
#include <vector>

namespace p2 {

// FIFO of movable, default-constructible T.
template <class T>
class Ring {
 public:
  bool empty() const { return size_ == 0; }
  size_t size() const { return size_; }
  T& front() { return slots_[head_]; }
  const T& front() const { return slots_[head_]; }
  const T& operator[](size_t i) const { return slots_[(head_ + i) & (slots_.size() - 1)]; }  // i-th oldest

  void push_back(T&& v) {
    if (size_ == slots_.size()) grow();
    slots_[(head_ + size_) & (slots_.size() - 1)] = std::move(v);
    ++size_;
  }
  // Takes the oldest element out.
  T pop_front() {
    T v = std::move(slots_[head_]);
    head_ = (head_ + 1) & (slots_.size() - 1);
    --size_;
    return v;
  }

 private:
  void grow() {
    std::vector<T> bigger(slots_.empty() ? kFirstCapacity : 2 * slots_.size());
    for (size_t i = 0; i < size_; ++i)
      bigger[i] = std::move(slots_[(head_ + i) & (slots_.size() - 1)]);
    slots_.swap(bigger);
    head_ = 0;
  }
  static constexpr size_t kFirstCapacity = 8;  // a power of two: indices wrap by masking
  std::vector<T> slots_;
  size_t head_ = 0;
  size_t size_ = 0;
};

}  // namespace p2
