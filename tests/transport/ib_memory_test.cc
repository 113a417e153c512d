// Memory registration of the ib transport on the fake provider: the MR cache (hits, misses,
// merging, eviction, NCCL's registrations dropped on deregMr), register_memory() for host,
// GPU and dma-buf memory, registrations used by transfers, and the GPUDirect flush.
#include <unistd.h>

#include "tests/transport/fake_verbs_pair.h"
#include "transport/ib/ib_mr_cache.h"
#include "transport/ib/verbs_owned.h"

namespace squeeze::transport::ib::fake {
namespace {

// A protection domain on the fake device, for cache tests without a transport.
struct Pd {
  FakeVerbs fake;
  VerbsApi api = fake.api();
  Owned<ibv_context> ctx;
  Owned<ibv_pd> pd;
  Pd() {
    int n = 0;
    ibv_device** list = api.get_device_list(&n);
    ctx = Owned<ibv_context>(&api, api.open_device(list[0]));
    api.free_device_list(list);
    pd = Owned<ibv_pd>(&api, api.alloc_pd(ctx.get()));
  }
};

TEST(IbMrCache, ReusesCoveringRegistrations) {
  Pd f;
  {
    MrCache cache(&f.api, f.pd.get(), 8, "test");
    std::vector<uint8_t> buf(1 << 20);
    std::shared_ptr<MrEntry> a, b, c;
    ASSERT_TRUE(cache.find_or_register(buf.data() + 100, 5000, &a).ok());
    ASSERT_TRUE(cache.find_or_register(buf.data() + 100, 5000, &b).ok());
    ASSERT_TRUE(cache.find_or_register(buf.data() + 200, 10, &c).ok()) << "a sub-range";
    EXPECT_EQ(a, b);
    EXPECT_EQ(a, c);
    EXPECT_TRUE(a->covers(buf.data() + 100, 5000));
    MrCache::Stats s = cache.stats();
    EXPECT_EQ(s.misses, 1u);
    EXPECT_EQ(s.hits, 2u);
    EXPECT_EQ(f.fake.counters().reg_mr_calls, 1u);
  }
  EXPECT_EQ(f.fake.counters().mrs, 0) << "the cache deregisters what it kept";
}

TEST(IbMrCache, OverlappingRangesMergeAndTheOldMrLivesWhileHeld) {
  Pd f;
  MrCache cache(&f.api, f.pd.get(), 8, "test");
  std::vector<uint8_t> buf(1 << 20);
  std::shared_ptr<MrEntry> a, b;
  ASSERT_TRUE(cache.find_or_register(buf.data(), 64 * 1024, &a).ok());
  ASSERT_TRUE(cache.find_or_register(buf.data() + 32 * 1024, 256 * 1024, &b).ok());
  EXPECT_NE(a, b);
  EXPECT_TRUE(b->covers(buf.data(), 32 * 1024 + 256 * 1024)) << "the union";
  EXPECT_EQ(cache.stats().entries, 1u);
  EXPECT_EQ(cache.stats().evictions, 1u);
  EXPECT_EQ(f.fake.counters().mrs, 2) << "the merged-away MR stays while an operation holds it";
  a.reset();
  EXPECT_EQ(f.fake.counters().mrs, 1);
}

TEST(IbMrCache, EvictsLeastRecentlyUsedBeyondTheLimit) {
  Pd f;
  MrCache cache(&f.api, f.pd.get(), 2, "test");
  std::vector<std::vector<uint8_t>> bufs(3, std::vector<uint8_t>(64 * 1024));
  std::shared_ptr<MrEntry> e;
  ASSERT_TRUE(cache.find_or_register(bufs[0].data() + 8192, 100, &e).ok());
  ASSERT_TRUE(cache.find_or_register(bufs[1].data() + 8192, 100, &e).ok());
  ASSERT_TRUE(cache.find_or_register(bufs[0].data() + 8192, 100, &e).ok());  // 0 is now the newest
  ASSERT_TRUE(cache.find_or_register(bufs[2].data() + 8192, 100, &e).ok());
  e.reset();
  EXPECT_EQ(cache.stats().entries, 2u);
  EXPECT_EQ(f.fake.counters().mrs, 2);
  ASSERT_TRUE(cache.find_or_register(bufs[0].data() + 8192, 100, &e).ok());
  EXPECT_EQ(cache.stats().hits, 2u) << "buffer 0 was kept, buffer 1 evicted";
}

TEST(IbMrCache, NcclRegistrationsAreDroppedOnRelease) {
  Pd f;
  MrCache cache(&f.api, f.pd.get(), 8, "test");
  std::vector<uint8_t> buf(1 << 20);
  MemoryDesc m{buf.data(), buf.size(), kPtrHost, -1, 0};
  std::shared_ptr<MrEntry> a, b, c;
  ASSERT_TRUE(cache.register_region(m, &a).ok());
  ASSERT_TRUE(cache.register_region(m, &b).ok());
  EXPECT_EQ(a, b);
  EXPECT_EQ(a->explicit_refs, 2);
  ASSERT_TRUE(cache.find_or_register(buf.data() + 5, 1000, &c).ok())
      << "an unregistered pointer into it";
  EXPECT_EQ(c, a);
  cache.release(a);
  cache.release(b);
  EXPECT_EQ(cache.stats().entries, 0u) << "NCCL may free it now";
  a.reset();
  b.reset();
  c.reset();
  EXPECT_EQ(f.fake.counters().mrs, 0);
  EXPECT_FALSE(cache.register_region(MemoryDesc{nullptr, 10, kPtrHost, -1, 0}, &a).ok());
  EXPECT_FALSE(cache.register_region(MemoryDesc{buf.data(), 10, 7, -1, 0}, &a).ok());
}

TEST(IbMrCache, DmaBufUsesItsOwnCall) {
  Pd f;
  std::vector<uint8_t> buf(1 << 16);
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  MemoryDesc m{buf.data(), buf.size(), kPtrCuda, fds[0], 0};
  std::shared_ptr<MrEntry> e;
  {
    MrCache cache(&f.api, f.pd.get(), 8, "test");
    ASSERT_TRUE(cache.register_region(m, &e).ok());
    EXPECT_TRUE(e->dmabuf);
    EXPECT_EQ(e->ptr_type, kPtrCuda);
    cache.release(e);
    e.reset();
  }
  VerbsApi old = f.fake.api(/*with_dmabuf=*/false);
  MrCache cache(&old, f.pd.get(), 8, "test");
  Status s = cache.register_region(m, &e);
  EXPECT_NE(s.message().find("needs ibv_reg_dmabuf_mr"), std::string::npos) << s.message();
  close(fds[0]);
  close(fds[1]);
}

TEST(IbRegistration, TransfersReuseRegistrations) {
  IbPair p;
  p.open();
  p.connect();
  std::vector<uint8_t> src(1 << 20, 9), dst(1 << 20);
  // Unregistered buffers: registered on first use, then found in the cache.
  uint64_t after_first = 0;
  for (int round = 0; round < 5; ++round) {
    RecvItem ri{1, dst.data(), dst.size()};
    int rs = -1, ss = -1;
    ASSERT_TRUE(p.recv->post({&ri, 1}, &rs).ok());
    ASSERT_TRUE(
        p.send->post({{1, PayloadKind::kRaw, src.size(), src.size()}, src.data(), nullptr}, &ss)
            .ok());
    ASSERT_TRUE(p.complete(ss, rs, {}).ok());
    p.send->release(ss);
    p.recv->release(rs);
    if (round == 0) after_first = p.fake.counters().reg_mr_calls;
  }
  EXPECT_EQ(p.fake.counters().reg_mr_calls, after_first) << "no registration after the first round";
  // NCCL's registrations (regMr): used as given, no cache registration, gone on deregMr.
  std::unique_ptr<Registration> rs_reg, ss_reg;
  ASSERT_TRUE(p.recv->register_memory({dst.data(), dst.size(), kPtrHost, -1, 0}, &rs_reg).ok());
  ASSERT_TRUE(p.send->register_memory({src.data(), src.size(), kPtrHost, -1, 0}, &ss_reg).ok());
  ASSERT_NE(rs_reg, nullptr);
  const uint64_t regs = p.fake.counters().reg_mr_calls;
  RecvItem ri{1, dst.data(), dst.size(), rs_reg.get()};
  int rs = -1, ss = -1;
  ASSERT_TRUE(p.recv->post({&ri, 1}, &rs).ok());
  ASSERT_TRUE(
      p.send->post({{1, PayloadKind::kRaw, 4096, 4096}, src.data() + 100, ss_reg.get()}, &ss).ok());
  ASSERT_TRUE(p.complete(ss, rs, {}).ok());
  p.send->release(ss);
  p.recv->release(rs);
  EXPECT_EQ(p.fake.counters().reg_mr_calls, regs);
  // A registration that does not cover the buffer is a usage error.
  RecvItem bad{1, dst.data(), dst.size() + 65536, rs_reg.get()};
  Status s = p.recv->post({&bad, 1}, &rs);
  EXPECT_EQ(s.code(), Status::Code::kInvalidUsage);
  EXPECT_NE(s.message().find("does not cover"), std::string::npos) << s.message();
  rs_reg.reset();  // deregMr before the comms close, as NCCL does
  ss_reg.reset();
  p.close_and_check();
}

TEST(IbRegistration, GpuMemoryNeedsGpuDirect) {
  IbPair p;
  p.open();
  p.connect();
  std::vector<uint8_t> buf(4096);
  std::unique_ptr<Registration> r;
  Status s = p.recv->register_memory({buf.data(), buf.size(), kPtrCuda, -1, 0}, &r);
  EXPECT_EQ(s.code(), Status::Code::kInvalidUsage);
  EXPECT_NE(s.message().find("needs GPUDirect RDMA"), std::string::npos) << s.message();
  int slot = 0;
  RecvItem it{0, buf.data(), 10};
  ASSERT_TRUE(p.recv->flush({&it, 1}, &slot).ok());
  EXPECT_EQ(slot, RecvComm::kNothingToFlush) << "no GDR: nothing ever needs a flush";
  p.close_and_check();
}

TEST(IbRegistration, GpuReceivesAreFlushedThroughALoopbackRead) {
  IbPair p;
  IbOptions rx = test_options("fake_1");
  rx.gdr = 1;  // as if nvidia-peermem were loaded
  p.open(test_options("fake_0"), rx);
  ASSERT_TRUE(p.b->devices()[0].force_flush);
  p.connect();
  // Host memory stands in for GPU memory: the fake cannot tell, the transport treats it as GPU.
  std::vector<uint8_t> gpu(8192), host(64), src(5000, 4);
  std::unique_ptr<Registration> greg, hreg;
  ASSERT_TRUE(p.recv->register_memory({gpu.data(), gpu.size(), kPtrCuda, -1, 0}, &greg).ok());
  ASSERT_TRUE(p.recv->register_memory({host.data(), host.size(), kPtrHost, -1, 0}, &hreg).ok());
  RecvItem ri{2, gpu.data(), gpu.size(), greg.get()};
  int rs = -1, ss = -1;
  ASSERT_TRUE(p.recv->post({&ri, 1}, &rs).ok());
  ASSERT_TRUE(
      p.send->post({{2, PayloadKind::kRaw, src.size(), src.size()}, src.data(), nullptr}, &ss)
          .ok());
  ASSERT_TRUE(p.complete(ss, rs, {}).ok());
  EXPECT_TRUE(std::equal(src.begin(), src.end(), gpu.begin()));
  const uint64_t reads = p.fake.counters().reads;
  RecvItem fi[2] = {{2, gpu.data(), src.size(), greg.get()}, {3, host.data(), 0, hreg.get()}};
  int fs = -1;
  ASSERT_TRUE(p.recv->flush({fi, 2}, &fs).ok());
  ASSERT_GE(fs, 0);
  bool done = false;
  ASSERT_TRUE(spin([&] { return done; }, [&] { ASSERT_TRUE(p.recv->test_flush(fs, &done).ok()); }));
  EXPECT_EQ(p.fake.counters().reads, reads + 1);
  EXPECT_EQ(p.recv->test_flush(fs, &done).code(), Status::Code::kInvalidUsage)
      << "the slot freed itself";
  RecvItem hi{3, host.data(), 10, hreg.get()};
  ASSERT_TRUE(p.recv->flush({&hi, 1}, &fs).ok());
  EXPECT_EQ(fs, RecvComm::kNothingToFlush) << "host memory needs no flush";
  p.recv->release(rs);
  greg.reset();
  hreg.reset();
  p.close_and_check();
}

}  // namespace
}  // namespace squeeze::transport::ib::fake
