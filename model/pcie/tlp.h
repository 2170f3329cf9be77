// tlp.h - a PCIe transaction layer packet as the model moves it.
//
// Header sizes are the PCIe ones: memory requests carry a 3-DW header when the
// address fits in 32 bits and a 4-DW header otherwise; completions carry 3 DW.
// The payload holds the real bytes being moved between process memories.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

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

struct Tlp {
  TlpKind kind = TlpKind::MemWrite;
  uint64_t addr = 0;       // requests: target address; completions: address of data[0]
  uint32_t length = 0;     // MemWrite/Completion: payload bytes; MemRead: bytes requested
  uint16_t requester = 0;  // requests: who asked; completions: who gets it
  uint8_t tag = 0;         // matches completions to the read that asked
  CplStatus status = CplStatus::Success;
  uint32_t byte_count = 0; // completions: bytes of the read still to come, this one included
  std::vector<uint8_t> data;
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
