// tlp.h - a PCIe transaction layer packet as the model moves it.
//
// Header sizes are the PCIe ones: memory requests carry a 3-DW header when the
// address fits in 32 bits and a 4-DW header otherwise; completions carry 3 DW.
// The payload holds the real bytes being moved between process memories.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>

#include <systemc>

namespace p2 {

enum class TlpKind : uint8_t { MemWrite, MemRead, Completion };
enum class CplStatus : uint8_t { Success, UnsupportedRequest, CompleterAbort };
// The three flow-control classes that have separate credits.
enum class FcClass : uint8_t { Posted = 0, NonPosted = 1, Completion = 2 };
constexpr int kFcClasses = 3;

// Who issued a request, so its completions find their way back.
enum class Function : uint8_t { Host = 0, Dmac = 1, Chip = 2 /* the board's register unit */, Hca = 3 /* an InfiniBand HCA */ };
inline uint16_t requester_id(unsigned node, Function f) {
  return static_cast<uint16_t>(node << 3 | static_cast<unsigned>(f));
}
inline unsigned requester_node(uint16_t rid) { return rid >> 3; }
inline Function requester_function(uint16_t rid) { return static_cast<Function>(rid & 7); }

constexpr uint32_t kDwordBytes = 4;
constexpr uint32_t kCreditDataBytes = 16;  // one data credit covers 4 DW
constexpr uint64_t kRequestBoundary = 4096;  // PCIe: no request crosses a 4 KiB boundary

// Bytes from `addr` up to the next 4 KiB boundary (a request starting at addr
// may carry at most this many).
inline uint64_t bytes_to_request_boundary(uint64_t addr) {
  return kRequestBoundary - addr % kRequestBoundary;
}

// The bytes a TLP carries. Up to kInline of them live in the TLP itself,
// which covers every TLP of the default links (max_payload_bytes 256): making
// and freeing one costs no allocation, and a bulk transfer makes tens of
// millions. Larger payloads (a link configured above 256 bytes) go to the
// heap. The interface is the part of std::vector the units use; bytes that
// resize() adds are zero, as a vector's are.
class Payload {
 public:
  static constexpr uint32_t kInline = 256;

  Payload() {}  // the inline bytes are not zeroed: size_ says none are valid
  Payload(const Payload& o) { assign(o.data(), o.data() + o.size_); }
  Payload& operator=(const Payload& o) {
    if (this != &o) assign(o.data(), o.data() + o.size_);
    return *this;
  }
  ~Payload() { delete[] heap_; }

  uint8_t* data() { return heap_ ? heap_ : inline_; }
  const uint8_t* data() const { return heap_ ? heap_ : inline_; }
  uint8_t* begin() { return data(); }
  uint8_t* end() { return data() + size_; }
  const uint8_t* begin() const { return data(); }
  const uint8_t* end() const { return data() + size_; }
  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  uint8_t& operator[](size_t i) { return data()[i]; }
  uint8_t operator[](size_t i) const { return data()[i]; }

  void resize(size_t n) {
    const size_t old = size_;
    reserve(n);
    if (n > old) std::memset(data() + old, 0, n - old);
    size_ = static_cast<uint32_t>(n);
  }
  // [first, last) must not lie inside this payload.
  void assign(const uint8_t* first, const uint8_t* last) {
    const size_t n = static_cast<size_t>(last - first);
    size_ = 0;
    reserve(n);
    if (n) std::memcpy(data(), first, n);
    size_ = static_cast<uint32_t>(n);
  }
  void clear() { size_ = 0; }

 private:
  void reserve(size_t n) {
    if (n <= capacity()) return;
    uint8_t* bigger = new uint8_t[n];
    if (size_) std::memcpy(bigger, data(), size_);
    delete[] heap_;
    heap_ = bigger;
    heap_capacity_ = static_cast<uint32_t>(n);
  }
  size_t capacity() const { return heap_ ? heap_capacity_ : kInline; }

  uint8_t* heap_ = nullptr;
  uint32_t size_ = 0, heap_capacity_ = 0;
  uint8_t inline_[kInline];
};

struct Tlp {
  // User-provided, so that make_unique<Tlp>() (value-initialisation) does not
  // first zero the whole object, payload buffer included.
  Tlp() {}
  TlpKind kind = TlpKind::MemWrite;
  uint64_t addr = 0;       // requests: target address; completions: address of data[0]
  uint32_t length = 0;     // MemWrite/Completion: payload bytes; MemRead: bytes requested
  uint16_t requester = 0;  // requests: who asked; completions: who gets it
  uint8_t tag = 0;         // matches completions to the read that asked
  CplStatus status = CplStatus::Success;
  uint32_t byte_count = 0; // completions: bytes of the read still to come, this one included
  Payload data;
  uint64_t id = 0;              // unique in a run: traces and statistics
  sc_core::sc_time born;        // when the initiator created it

  FcClass fc_class() const {
    switch (kind) {
      case TlpKind::MemWrite: return FcClass::Posted;
      case TlpKind::MemRead: return FcClass::NonPosted;
      case TlpKind::Completion: return FcClass::Completion;
    }
    return FcClass::Posted;
  }
  uint32_t header_bytes() const {
    if (kind == TlpKind::Completion) return 3 * kDwordBytes;
    return (addr >> 32) ? 4 * kDwordBytes : 3 * kDwordBytes;
  }
  // Bytes of payload on the wire (reads carry none).
  uint32_t payload_bytes() const { return kind == TlpKind::MemRead ? 0 : length; }
  uint32_t data_credits() const {
    return (payload_bytes() + kCreditDataBytes - 1) / kCreditDataBytes;
  }
  bool is_request() const { return kind != TlpKind::Completion; }

  // A run makes and frees TLPs by the million, all of one size: freed ones
  // are kept for the next (the allocator's own fast path caches only a few,
  // and a burst of frees went to its slow one, a tenth of the simulator's
  // instructions on a bulk transfer).
  static void* operator new(size_t bytes);
  static void operator delete(void* p, size_t bytes) noexcept;
};

using TlpPtr = std::unique_ptr<Tlp>;

// The one place completions are made. A completion for `read` (requester, tag,
// id and birth copied) with `status`; with Success, `data` holds `bytes`
// starting at `addr`, and `byte_count` the bytes of the read still to come,
// this completion's included.
TlpPtr make_completion(const Tlp& read, CplStatus status);
TlpPtr make_completion(const Tlp& read, uint64_t addr, const uint8_t* bytes, uint32_t len,
                       uint32_t byte_count);

}  // namespace p2
