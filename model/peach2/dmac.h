// dmac.h - the PEACH2 DMA controller: four channels running chains of
// descriptors, fetched from host memory over the N link (chain mode) or held
// in register slots on the chip (register mode).
//
// Per descriptor: fetch (a 64-byte read; chain mode) or slot read (register
// mode), decode, validate; then for each block, read requests of at most
// max_read_request_bytes from local host or GPU memory, at most dmac_max_reads
// outstanding across the channels; each read's data leaves, in order, as
// writes of at most max_payload_bytes to the destination; a read tag is
// reused only once its writes have entered the crossbar. After the last write,
// notification writes (slot, tag) go to the destination board and, with
// notify-self, to this board. The next descriptor starts once the last write
// has entered the crossbar, or, after a P2_DESC_PIPELINE descriptor, once its
// last read has been issued (its writes and notifications then follow while
// the next one runs); in chain mode the descriptor after a P2_DESC_PIPELINE
// one is also prefetched the moment that one arrives. Any error stops the
// channel with P2_DMA_FAILED.
#pragma once

#include <array>
#include <cstdint>
#include <deque>
#include <map>
#include <vector>

#include <systemc>

#include "core/traffic.h"
#include "peach2/registers.h"
#include "peach2/router.h"
#include "peach2_hw.h"
#include "core/clock.h"
#include "peach2/config.h"
#include "core/timed_queue.h"

namespace p2 {

struct DmacStats {
  uint64_t runs = 0, descriptors = 0, bytes = 0, errors = 0, ignored_starts = 0;
  uint64_t descriptor_fetches = 0;
  sc_core::sc_time latency_total, latency_min, latency_max;  // per descriptor
};

class Dmac : public sc_core::sc_module, public TlpSink {
 public:
  Dmac(sc_core::sc_module_name name, unsigned node, unsigned nnodes, const ChipConfig& config,
       Router& router, Registers& regs);

  uint64_t read_reg(unsigned channel, uint64_t reg) const;
  void write_reg(unsigned channel, uint64_t reg, uint64_t value);
  uint64_t desc_word(unsigned channel, unsigned slot, unsigned word) const;
  void set_desc_word(unsigned channel, unsigned slot, unsigned word, uint64_t value);

  void accept(TlpPtr completion) override;
  const DmacStats& stats() const { return stats_; }
  // Each descriptor whose data goes to another node is a transfer.
  void set_traffic_observer(TrafficObserver* observer) { traffic_ = observer; }

 private:
  enum class Phase { Idle, Fetch, Decode, Transfer };
  struct Channel {
    p2_dma_status status = P2_DMA_IDLE;
    p2_error error = P2_OK;
    uint64_t desc_ptr = 0, reg_count = 0, done = 0, runs = 0;
    uint64_t end_wb = 0, run_tag = 0;  // P2_DMA_END_WB, and the running start's tag
    std::array<p2_desc, P2_DESC_REG_SLOTS> slots{};
    bool register_mode = false;
    unsigned next_slot = 0;    // register mode: next slot to run
    uint64_t next_desc = 0;    // chain mode: next descriptor's address, 0 at the end
    Phase phase = Phase::Idle;
    bool fetch_issued = false;
    // Chain mode, after a P2_DESC_PIPELINE descriptor: the next descriptor is
    // fetched as soon as this one has arrived (prefetch), so its fetch
    // overlaps this one's data.
    struct Prefetch {
      uint64_t addr = 0;   // 0: none wanted
      bool issued = false, ready = false;
      bool awaited = false;  // the Fetch phase waits for this one's completion
      p2_desc desc{};
    } prefetch;
    // The descriptor being started or issuing its reads.
    uint64_t serial = 0;        // counts the channel's descriptors, never reset
    p2_desc desc{};
    uint32_t blocks = 0, block = 0;
    uint64_t block_offset = 0;  // next byte of the current block to read
    unsigned tags = 0;          // read tags it holds (its writes not all out)
    sc_core::sc_time started;
    // Descriptors whose reads are all issued but whose writes are not all out,
    // oldest first: a P2_DESC_PIPELINE descriptor lets the next one start.
    struct Draining {
      uint64_t serial;
      p2_desc desc;
      sc_core::sc_time started;
      unsigned tags;
    };
    std::deque<Draining> draining;
    uint64_t issued = 0, written = 0;  // data read requests of the run, in order
    std::map<uint64_t, int> reads;     // sequence -> tag, outstanding data reads
  };
  enum class Purpose { Descriptor, Prefetch, Data };
  struct Tag {
    bool busy = false;
    int channel = -1;
    uint64_t owner = 0;  // serial of the channel's descriptor that issued it
    Purpose purpose = Purpose::Data;
    uint64_t dst = 0;
    uint32_t length = 0, received = 0;
    std::vector<uint8_t> data;
    unsigned writes_pending = 0;
    bool orphan = false;  // its channel failed; drain and free
  };

  void kick();
  void run();
  void on_decoded();
  void start(unsigned c, uint64_t command);
  void begin_descriptor(unsigned c);
  void descriptor_arrived(unsigned c, const p2_desc& d);
  void issue_prefetch(unsigned c);
  void decode(unsigned c);
  int issue_read(unsigned c, Purpose purpose, uint64_t src, uint32_t len, uint64_t dst);  // tag or -1
  void emit_writes(unsigned c);
  bool more_descriptors(const Channel& ch) const;
  void complete(unsigned c, const p2_desc& d, sc_core::sc_time started);
  void finish_descriptor(unsigned c);
  void fail(unsigned c, p2_error e);
  void write_back_end(unsigned c);  // the run is over: tell the host (P2_DMA_END_WB)
  void free_tag(int tag);
  void send(TlpPtr tlp, int tag);
  p2_error validate(const p2_desc& d) const;

  unsigned node_, nnodes_;
  TrafficObserver* traffic_ = nullptr;
  const DmacConfig& config_;
  ChipClock clock_;
  Router& router_;
  Registers& regs_;
  std::array<Channel, P2_DMA_CHANNELS> channels_;
  std::vector<Tag> tags_;
  std::deque<int> in_crossbar_;  // tag of each TLP we queued at the crossbar (-1: none)
  TimedQueue<unsigned> decoding_;  // channels whose descriptor decodes at a time
  Wakeup run_wake_{Wakeup::Kind::Decision};  // the engine's next clock edge
  unsigned next_channel_ = 0;
  uint64_t next_tlp_id_ = 0;
  DmacStats stats_;
};

}  // namespace p2
