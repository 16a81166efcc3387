// The torch.save checkpoint reader on malformed and hostile archives: crafted archives
// (support/torch_archive_builders.h) for every zip and pickle defect with the exact one-line
// message, and fuzzing of the real file that may only ever produce eagle2::Error.
#include <gtest/gtest.h>

#include <cstdint>
#include <exception>
#include <random>
#include <string>
#include <vector>

#include "core/error.h"
#include "io/torch_checkpoint.h"
#include "support/shared_data.h"
#include "support/torch_archive_builders.h"

namespace eagle2 {
namespace {

using namespace test::torch_archive;

// Loads or throws Error; anything else (another exception type) is a failure. Crashes and hangs
// are what the sanitizer build and the test timeout catch.
void load_or_error(const std::string& path, const std::string& what) {
  try {
    TorchCheckpoint ckpt(path);
    for (const auto& [name, t] : ckpt.tensors()) {
      // Touch every byte so that a view outside the mapping shows up under ASan.
      volatile unsigned char sink = 0;
      const auto* p = static_cast<const unsigned char*>(t.data);
      for (size_t i = 0; i < t.nbytes(); ++i) sink = sink ^ p[i];
      (void)sink;
    }
  } catch (const Error&) {
  } catch (const std::exception& e) {
    ADD_FAILURE() << what << ": threw a non-Error exception: " << e.what();
  }
}

// ---------------------------------------------------------------------------------------------
// Zip defects

TEST_F(TorchCheckpointTest, NotAZip) {
  EXPECT_EQ(error_for(std::string(100, 'x')),
            path_ + ": not a zip archive (no end of central directory record)");
  EXPECT_EQ(error_for(""),
            path_ + ": not a zip archive (0 bytes, no end of central directory record)");
  // A whole archive cut before its end record.
  const std::string good = checkpoint(state_dict_pickle({{.key = "w"}}), {{"0", f32_bytes(kSix)}});
  EXPECT_EQ(error_for(good.substr(0, good.size() - 1)),
            path_ + ": not a zip archive (no end of central directory record)");
}

TEST_F(TorchCheckpointTest, CompressedEntry) {
  EXPECT_EQ(error_for(make_zip({{"archive/data.pkl", "x", 8, 0}})),
            path_ +
                ": zip entry 'archive/data.pkl' is compressed (method 8); only stored entries are "
                "supported");
}

TEST_F(TorchCheckpointTest, EncryptedEntry) {
  EXPECT_EQ(
      error_for(make_zip({{"archive/data.pkl", "x", 0, 1}})),
      path_ + ": zip entry 'archive/data.pkl' is encrypted; encrypted entries are not supported");
}

TEST_F(TorchCheckpointTest, EntryPastTheEnd) {
  std::string z = make_zip({{"archive/data.pkl", "abc"}});
  const size_t cd = z.rfind(std::string("PK\x01\x02", 4));
  z.replace(cd + 20, 8, le(1000, 4) + le(1000, 4));  // sizes
  EXPECT_EQ(error_for(z), path_ +
                              ": zip entry 'archive/data.pkl' (1000 bytes at offset 64) runs past "
                              "the end of the file (" +
                              std::to_string(z.size()) + " bytes)");
  z = make_zip({{"archive/data.pkl", "abc"}});
  z.replace(cd + 42, 4, le(0x7fffffff, 4));  // local header offset
  EXPECT_EQ(error_for(z),
            path_ + ": zip entry 'archive/data.pkl' has no local header at offset 2147483647");
}

TEST_F(TorchCheckpointTest, CentralDirectoryOutsideTheFile) {
  std::string z = make_zip({{"archive/data.pkl", "abc"}});
  z.replace(z.size() - 6, 4, le(0xfffffff0u, 4));  // EOCD central directory offset
  EXPECT_EQ(error_for(z).rfind(path_ + ": zip central directory (", 0), 0u);
}

TEST_F(TorchCheckpointTest, Zip64RecordsAreChecked) {
  ZipOptions opt;
  opt.zip64 = true;
  const std::string z = make_zip({{"archive/data.pkl", "."}}, opt);
  const size_t locator = z.size() - 22 - 20;
  std::string bad = z;
  bad.replace(locator, 4, "PK\x99\x99");  // no locator, yet the end record is saturated
  EXPECT_EQ(error_for(bad), path_ +
                                ": zip end of central directory record needs zip64, but there is "
                                "no zip64 locator");
  bad = z;
  bad.replace(locator + 8, 8, le(1u << 30, 8));
  EXPECT_EQ(error_for(bad), path_ +
                                ": zip64 end of central directory record (offset 1073741824) lies "
                                "outside the file");
  bad = z;
  bad.replace(z.rfind(std::string("PK\x01\x02", 4)) + 30, 2, le(0, 2));  // drop the extra field
  EXPECT_EQ(error_for(bad),
            path_ + ": zip entry 'archive/data.pkl' needs a zip64 extra field but has none");
}

TEST_F(TorchCheckpointTest, MissingDataPkl) {
  EXPECT_EQ(error_for(make_zip({{"archive/version", "3\n"}, {"archive/data/0", "abcd"}})),
            path_ + ": zip archive has no entry 'archive/data.pkl'; not a torch.save checkpoint");
  EXPECT_EQ(
      error_for(make_zip({{"data.pkl", "."}})),
      path_ +
          ": zip entry 'data.pkl' is not inside an archive folder; not a torch.save checkpoint");
  EXPECT_EQ(error_for(make_zip({})), path_ + ": zip archive is empty; not a torch.save checkpoint");
}

TEST_F(TorchCheckpointTest, ArchivePrefixComesFromTheFirstEntry) {
  write_bytes(path_, make_zip({{"my_model/data.pkl", state_dict_pickle({{.key = "w"}})},
                               {"my_model/data/0", f32_bytes(kSix)}}));
  EXPECT_EQ(f32_of(TorchCheckpoint(path_).tensors().at("w")), kSix);
}

TEST_F(TorchCheckpointTest, BigEndianByteorder) {
  EXPECT_EQ(error_for(make_zip(
                {{"archive/data.pkl", Pickle().op('}').stop().b}, {"archive/byteorder", "big"}})),
            path_ + ": byteorder is 'big'; only little-endian checkpoints are supported");
}

TEST_F(TorchCheckpointTest, DuplicateEntries) {
  EXPECT_EQ(error_for(make_zip({{"archive/data.pkl", "."}, {"archive/data.pkl", "."}})),
            path_ + ": zip archive has two entries named 'archive/data.pkl'");
}

// ---------------------------------------------------------------------------------------------
// Pickle defects

TEST_F(TorchCheckpointTest, UnsupportedOpcodes) {
  EXPECT_EQ(error_for(checkpoint(Pickle().op('}').op('0').stop().b, {})),
            path_ + ": unsupported pickle opcode 0x30 ('POP') at byte 3");
  EXPECT_EQ(error_for(checkpoint(Pickle().op(0x93).stop().b, {})),
            path_ + ": unsupported pickle opcode 0x93 ('STACK_GLOBAL') at byte 2");
  EXPECT_EQ(error_for(checkpoint(Pickle().op(0xff).stop().b, {})),
            path_ + ": unsupported pickle opcode 0xff at byte 2");
  EXPECT_EQ(error_for(checkpoint("\x80\x01}.", {})),
            path_ + ": data.pkl: PROTO at byte 0: unsupported pickle protocol 1");
}

TEST_F(TorchCheckpointTest, DisallowedGlobals) {
  EXPECT_EQ(error_for(checkpoint(Pickle().global("os", "system").stop().b, {})),
            path_ + ": pickle global 'os.system' is not allowed");
  EXPECT_EQ(
      error_for(checkpoint(state_dict_pickle({{.key = "ids", .storage_type = "IntStorage"}}), {})),
      path_ +
          ": pickle global 'torch.IntStorage' is not allowed (supported: float32, float16 and "
          "bfloat16 tensors, and int64 and bool index tensors)");
  EXPECT_EQ(
      error_for(checkpoint(Pickle().global("torch", "FloatStorage").op(')').op('R').stop().b, {})),
      path_ + ": data.pkl: REDUCE at byte 23: pickle global 'torch.FloatStorage' cannot be called");
  // Control bytes from the file are escaped so the message stays one line.
  EXPECT_EQ(error_for(checkpoint(Pickle().global("os\x01", "system").stop().b, {})),
            path_ + ": pickle global 'os\\x01.system' is not allowed");
}

TEST_F(TorchCheckpointTest, StorageProblems) {
  const std::string pkl =
      state_dict_pickle({{.key = "w", .numel = 10, .shape = {2, 5}, .stride = {5, 1}}});
  EXPECT_EQ(error_for(checkpoint(pkl, {{"0", f32_bytes(kSix)}})),
            path_ +
                ": truncated storage: zip entry 'archive/data/0' holds 24 bytes, the pickle "
                "declares 10 elements of 4 bytes");
  EXPECT_EQ(error_for(checkpoint(pkl, {{"1", f32_bytes(kSix)}})),
            path_ + ": storage '0' has no zip entry 'archive/data/0'");
  EXPECT_EQ(error_for(checkpoint(state_dict_pickle({{.key = "w", .numel = -1}}),
                                 {{"0", f32_bytes(kSix)}})),
            path_ +
                ": truncated storage: zip entry 'archive/data/0' holds 24 bytes, the pickle "
                "declares -1 elements of 4 bytes");
}

TEST_F(TorchCheckpointTest, ViewOutsideItsStorage) {
  const std::string six = f32_bytes(kSix);
  EXPECT_EQ(error_for(checkpoint(state_dict_pickle({{.key = "w", .offset = 1}}), {{"0", six}})),
            path_ +
                ": tensor 'w' (storage offset 1, shape [2, 3], stride [3, 1]) reaches element 6 of "
                "storage '0', "
                "which holds 6 elements");
  EXPECT_EQ(error_for(checkpoint(state_dict_pickle({{.key = "w", .shape = {3, 3}}}), {{"0", six}})),
            path_ +
                ": tensor 'w' (storage offset 0, shape [3, 3], stride [3, 1]) reaches element 8 of "
                "storage '0', "
                "which holds 6 elements");
  EXPECT_EQ(
      error_for(checkpoint(state_dict_pickle({{.key = "w", .shape = {2, 3}, .stride = {1, 4}}}),
                           {{"0", six}})),
      path_ +
          ": tensor 'w' (storage offset 0, shape [2, 3], stride [1, 4]) reaches element 9 of "
          "storage '0', "
          "which holds 6 elements");
  EXPECT_EQ(error_for(checkpoint(state_dict_pickle({{.key = "w", .offset = -1}}), {{"0", six}})),
            path_ +
                ": tensor 'w' has a negative storage offset (storage offset -1, shape [2, 3], "
                "stride [3, 1])");
  EXPECT_EQ(
      error_for(checkpoint(state_dict_pickle({{.key = "w", .shape = {2, -3}}}), {{"0", six}})),
      path_ +
          ": tensor 'w' has a negative size or stride (storage offset 0, shape [2, -3], stride [3, "
          "1])");
  const int64_t big = int64_t{1} << 40;
  EXPECT_EQ(
      error_for(checkpoint(state_dict_pickle({{.key = "w", .shape = {big, big}, .stride = {0, 0}}}),
                           {{"0", six}})),
      path_ +
          ": tensor 'w' is too large (storage offset 0, shape [1099511627776, 1099511627776], "
          "stride [0, 0])");
  // A stride-0 broadcast of one element would need a huge copy from a tiny file.
  EXPECT_EQ(error_for(checkpoint(
                state_dict_pickle({{.key = "w", .shape = {int64_t{1} << 30}, .stride = {0}}}),
                {{"0", six}})),
            path_ +
                ": tensor 'w' (storage offset 0, shape [1073741824], stride [0]) needs a copy of "
                "4294967296 bytes, "
                "more than the whole file holds; refusing");
}

TEST_F(TorchCheckpointTest, WrongTopLevelShapes) {
  EXPECT_EQ(error_for(checkpoint(Pickle().op(']').stop().b, {})),
            path_ + ": data.pkl holds a list, expected a dict of name -> tensor");
  EXPECT_EQ(error_for(checkpoint(Pickle().op('}').str("a").integer(1).op('s').stop().b, {})),
            path_ + ": state dict entry 'a' is a int, expected a tensor");
  EXPECT_EQ(error_for(checkpoint(Pickle().op('}').integer(1).integer(1).op('s').stop().b, {})),
            path_ + ": state dict has a key that is a int, expected a str");
  EXPECT_EQ(error_for(checkpoint(state_dict_pickle({{.key = "w"}, {.key = "w"}}),
                                 {{"0", f32_bytes(kSix)}})),
            path_ + ": state dict has two entries named 'w'");
}

TEST_F(TorchCheckpointTest, MalformedPickles) {
  EXPECT_EQ(error_for(checkpoint(Pickle().op('}').op('X').raw(le(16, 4) + "ab").b, {})),
            path_ + ": data.pkl is truncated (BINUNICODE at byte 3 needs 16 more bytes)");
  EXPECT_EQ(error_for(checkpoint(Pickle().op('}').b, {})),
            path_ + ": data.pkl ends at byte 3 without a STOP opcode");
  EXPECT_EQ(error_for(checkpoint(Pickle().op('}').op('h').raw(le(7, 1)).stop().b, {})),
            path_ + ": data.pkl: BINGET at byte 3: memo key 7 is not defined");
  EXPECT_EQ(error_for(checkpoint(Pickle().op('s').stop().b, {})),
            path_ + ": data.pkl: SETITEM at byte 2: stack underflow");
  EXPECT_EQ(error_for(checkpoint(Pickle().op('t').stop().b, {})),
            path_ + ": data.pkl: TUPLE at byte 2: no MARK on the stack");
  EXPECT_EQ(error_for(checkpoint(Pickle().op('}').op('}').stop().b, {})),
            path_ +
                ": data.pkl: STOP at byte 4: stack holds 2 items and 0 MARKs, expected exactly one "
                "object");
  // Popping across a MARK is an underflow, as in Python.
  EXPECT_EQ(error_for(checkpoint(Pickle().op('}').op('(').integer(1).op('s').stop().b, {})),
            path_ + ": data.pkl: SETITEM at byte 6: stack underflow");
  EXPECT_EQ(error_for(checkpoint(Pickle().op(']').integer(1).integer(2).op('s').stop().b, {})),
            path_ + ": data.pkl: SETITEM at byte 7: target is a list, not a dict");
  EXPECT_EQ(
      error_for(checkpoint(Pickle().op(0x8a).raw(le(9, 1) + std::string(9, '\x01')).stop().b, {})),
      path_ + ": data.pkl: LONG1 at byte 2: integer of 9 bytes is too large");
  EXPECT_EQ(
      error_for(checkpoint(
          Pickle().global("torch._utils", "_rebuild_tensor_v2").op(')').op('R').stop().b, {})),
      path_ + ": data.pkl: REDUCE at byte 36: _rebuild_tensor_v2 expects 6 or 7 arguments, got 0");
  EXPECT_EQ(error_for(checkpoint(Pickle().op('(').str("x").op('t').op('Q').stop().b, {})),
            path_ +
                ": data.pkl: BINPERSID at byte 10: persistent id is not ('storage', storage_type, "
                "key, location, numel)");
}

TEST_F(TorchCheckpointTest, HostileStructuresStayCheap) {
  // A list that contains itself, and a tuple nested 200k deep: no leak, no deep recursion.
  EXPECT_EQ(error_for(checkpoint(
                Pickle().op(']').op('q').raw(le(0, 1)).op('h').raw(le(0, 1)).op('a').stop().b, {})),
            path_ + ": data.pkl holds a list, expected a dict of name -> tensor");
  Pickle deep;
  deep.op('N').raw(std::string(200000, '\x85'));
  EXPECT_EQ(error_for(checkpoint(deep.stop().b, {})),
            path_ + ": data.pkl holds a tuple, expected a dict of name -> tensor");
  // A frame length beyond the data.
  EXPECT_EQ(error_for(checkpoint(Pickle().op(0x95).raw(le(1000, 8)).stop().b, {})),
            path_ + ": data.pkl is truncated (FRAME at byte 2 needs 1000 more bytes)");
}

// ---------------------------------------------------------------------------------------------
// Fuzzing: only eagle2::Error, never a crash (the sanitizer build checks memory) or a hang.

TEST(TorchCheckpointFuzz, TruncatedAndCorruptedRealFile) {
  EAGLE2_SHARED_FILE(bin, "data/models/stories260K-eagle-head/pytorch_model.bin");
  const std::string good = test::read_file(bin);
  ASSERT_GT(good.size(), 4096u);
  const std::string path = test::temp_dir("torch_checkpoint_fuzz") + "/model.bin";
  std::mt19937_64 rng(12345);

  // Every cut is missing the end record; cover both ends densely and the middle sparsely.
  for (size_t len = 0; len < 200; ++len) {
    write_bytes(path, good.substr(0, len));
    EXPECT_FALSE(load_error_of(path).empty()) << "length " << len;
    write_bytes(path, good.substr(0, good.size() - 1 - len));
    EXPECT_FALSE(load_error_of(path).empty()) << "length " << good.size() - 1 - len;
  }
  for (int i = 0; i < test::scaled(100); ++i) {
    const size_t len = rng() % good.size();
    write_bytes(path, good.substr(0, len));
    EXPECT_FALSE(load_error_of(path).empty()) << "length " << len;
  }

  // Byte flips where the structure lives: data.pkl at the front, the central directory at the back.
  for (int i = 0; i < test::scaled(1500); ++i) {
    std::string bad = good;
    const int flips = 1 + static_cast<int>(rng() % 4);
    for (int f = 0; f < flips; ++f) {
      const size_t region = rng() % 10;
      size_t at;
      if (region < 5) {
        at = rng() % 2048;
      } else if (region < 9) {
        at = good.size() - 1 - rng() % 2048;
      } else {
        at = rng() % good.size();
      }
      bad[at] = static_cast<char>(
          rng() % 4 == 0 ? static_cast<unsigned char>(bad[at]) ^ (1u << (rng() % 8)) : rng());
    }
    write_bytes(path, bad);
    load_or_error(path, "flip iteration " + std::to_string(i));
  }
}

TEST(TorchCheckpointFuzz, MutatedPickleOfTheRealFile) {
  EAGLE2_SHARED_FILE(bin, "data/models/stories260K-eagle-head/pytorch_model.bin");
  std::vector<ZipItem> items = read_zip_items(test::read_file(bin));
  size_t pkl_index = items.size();
  for (size_t i = 0; i < items.size(); ++i) {
    if (items[i].name.size() >= 9 &&
        items[i].name.compare(items[i].name.size() - 9, 9, "/data.pkl") == 0)
      pkl_index = i;
  }
  ASSERT_LT(pkl_index, items.size());
  const std::string pkl = items[pkl_index].data;
  const std::string path = test::temp_dir("torch_checkpoint_pickle_fuzz") + "/model.bin";

  // Rewritten by our writer, the untouched pickle loads: the loop below fuzzes only the pickle.
  write_bytes(path, make_zip(items));
  ASSERT_EQ(TorchCheckpoint(path).tensors().size(), 11u);

  // Every strict prefix lacks its STOP.
  for (size_t len = 0; len < pkl.size(); ++len) {
    items[pkl_index].data = pkl.substr(0, len);
    write_bytes(path, make_zip(items));
    EXPECT_FALSE(load_error_of(path).empty()) << "pickle length " << len;
  }
  // Random flips, and random bytes spliced in or cut out.
  std::mt19937_64 rng(777);
  for (int i = 0; i < test::scaled(2000); ++i) {
    std::string bad = pkl;
    const int edits = 1 + static_cast<int>(rng() % 3);
    for (int e = 0; e < edits && !bad.empty(); ++e) {
      const size_t at = rng() % bad.size();
      switch (rng() % 4) {
        case 0:
          bad[at] = static_cast<char>(rng());
          break;
        case 1:
          bad[at] = static_cast<char>(static_cast<unsigned char>(bad[at]) ^ (1u << (rng() % 8)));
          break;
        case 2:
          bad.insert(at, 1, static_cast<char>(rng()));
          break;
        default:
          bad.erase(at, 1 + rng() % 8);
          break;
      }
    }
    items[pkl_index].data = bad;
    write_bytes(path, make_zip(items));
    load_or_error(path, "pickle edit iteration " + std::to_string(i));
  }
}

}  // namespace
}  // namespace eagle2
