#include "pcie/tlp.h"

namespace p2 {

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
