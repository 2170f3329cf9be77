#include "pcie/tlp.h"

namespace p2 {

namespace {
// Freed TLP blocks, for Tlp's operator new. The model runs on one thread
// (SystemC's), so the list needs no lock. Under AddressSanitizer none are
// kept, so that a use after free is still caught.
#if defined(__SANITIZE_ADDRESS__)
constexpr bool kKeep = false;
#else
constexpr bool kKeep = true;
#endif
constexpr size_t kKeptTlps = 4096;
void* kept_tlps[kKeptTlps];
size_t kept_count = 0;
}  // namespace

void* Tlp::operator new(size_t bytes) {
  if (bytes == sizeof(Tlp) && kept_count > 0) return kept_tlps[--kept_count];
  return ::operator new(bytes);
}

void Tlp::operator delete(void* p, size_t bytes) noexcept {
  if (kKeep && bytes == sizeof(Tlp) && kept_count < kKeptTlps) {
    kept_tlps[kept_count++] = p;
    return;
  }
  ::operator delete(p);
}

TlpPtr make_completion(const Tlp& read, CplStatus status) {
  auto cpl = std::make_unique<Tlp>();
  cpl->kind = TlpKind::Completion;
  cpl->addr = read.addr;
  cpl->requester = read.requester;
  cpl->tag = read.tag;
  cpl->status = status;
  cpl->id = read.id;
  cpl->born = read.born;
  return cpl;
}

TlpPtr make_completion(const Tlp& read, uint64_t addr, const uint8_t* bytes, uint32_t len,
                       uint32_t byte_count) {
  TlpPtr cpl = make_completion(read, CplStatus::Success);
  cpl->addr = addr;
  cpl->length = len;
  cpl->byte_count = byte_count;
  cpl->data.assign(bytes, bytes + len);
  return cpl;
}

}  // namespace p2
