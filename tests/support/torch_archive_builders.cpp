// The crafted-archive builders of support/torch_archive_builders.h.
#include "support/torch_archive_builders.h"

#include <fcntl.h>
#include <unistd.h>

#include <cstring>

#include "io/torch_checkpoint.h"
#include "support/errors.h"

namespace eagle2::test::torch_archive {

namespace {

uint64_t get_le(const std::string& s, size_t at, int n) {
  uint64_t v = 0;
  for (int i = n - 1; i >= 0; --i)
    v = (v << 8) | static_cast<unsigned char>(s[at + static_cast<size_t>(i)]);
  return v;
}

}  // namespace

std::string le(uint64_t v, int n) {
  std::string s(static_cast<size_t>(n), '\0');
  for (int i = 0; i < n; ++i) s[static_cast<size_t>(i)] = static_cast<char>(v >> (8 * i));
  return s;
}

std::string f32_bytes(const std::vector<float>& v) {
  std::string s(v.size() * 4, '\0');
  std::memcpy(s.data(), v.data(), s.size());
  return s;
}

std::string u16_bytes(const std::vector<uint16_t>& v) {
  std::string s(v.size() * 2, '\0');
  std::memcpy(s.data(), v.data(), s.size());
  return s;
}

std::vector<float> f32_of(const TensorView& t) {
  std::vector<float> v(static_cast<size_t>(t.numel()));
  std::memcpy(v.data(), t.data, v.size() * 4);
  return v;
}

void write_bytes(const std::string& path, const std::string& bytes) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
  ASSERT_GE(fd, 0) << path;
  ASSERT_EQ(::pwrite(fd, bytes.data(), bytes.size(), 0), static_cast<ssize_t>(bytes.size()));
  ASSERT_EQ(::ftruncate(fd, static_cast<off_t>(bytes.size())), 0);
  ::close(fd);
}

std::string load_error_of(const std::string& path) {
  return test::error_of([&] { TorchCheckpoint ckpt(path); });
}

std::string make_zip(const std::vector<ZipItem>& items, const ZipOptions& opt) {
  std::string out, central;
  for (const ZipItem& it : items) {
    const uint64_t lho = out.size();
    std::string extra;
    if (opt.align > 1) {
      const size_t before = lho + 30 + it.name.size() + 4;
      const size_t pad = (opt.align + opt.phase - before % opt.align) % opt.align;
      extra = "FB" + le(pad, 2) + std::string(pad, 'Z');
    }
    out += le(0x04034b50, 4) + le(opt.zip64 ? 45 : 20, 2) + le(it.flags, 2) + le(it.method, 2) +
           le(0, 4) /* time, date */ + le(0, 4) /* crc: not checked by the reader */ +
           le(it.data.size(), 4) + le(it.data.size(), 4) + le(it.name.size(), 2) +
           le(extra.size(), 2) + it.name + extra + it.data;

    std::string cextra;
    uint64_t small_size = it.data.size(), small_lho = lho;
    if (opt.zip64) {
      cextra = le(1, 2) + le(24, 2) + le(it.data.size(), 8) + le(it.data.size(), 8) + le(lho, 8);
      small_size = 0xffffffffu;
      small_lho = 0xffffffffu;
    }
    central += le(0x02014b50, 4) + le(opt.zip64 ? 45 : 20, 2) + le(opt.zip64 ? 45 : 20, 2) +
               le(it.flags, 2) + le(it.method, 2) + le(0, 4) + le(0, 4) + le(small_size, 4) +
               le(small_size, 4) + le(it.name.size(), 2) + le(cextra.size(), 2) + le(0, 2) +
               le(0, 2) + le(0, 2) + le(0, 4) + le(small_lho, 4) + it.name + cextra;
  }
  const uint64_t cd_offset = out.size();
  out += central;
  const uint64_t n = items.size();
  if (opt.zip64) {
    const uint64_t rec = out.size();
    out += le(0x06064b50, 4) + le(44, 8) + le(45, 2) + le(45, 2) + le(0, 4) + le(0, 4) + le(n, 8) +
           le(n, 8) + le(central.size(), 8) + le(cd_offset, 8);
    out += le(0x07064b50, 4) + le(0, 4) + le(rec, 8) + le(1, 4);
    out += le(0x06054b50, 4) + le(0, 2) + le(0, 2) + le(0xffff, 2) + le(0xffff, 2) +
           le(0xffffffffu, 4) + le(0xffffffffu, 4) + le(0, 2);
  } else {
    out += le(0x06054b50, 4) + le(0, 2) + le(0, 2) + le(n, 2) + le(n, 2) + le(central.size(), 4) +
           le(cd_offset, 4) + le(0, 2);
  }
  return out;
}

std::vector<ZipItem> read_zip_items(const std::string& zip) {
  const size_t eocd = zip.rfind(std::string("PK\x05\x06", 4));
  const uint64_t count = get_le(zip, eocd + 10, 2);
  size_t pos = get_le(zip, eocd + 16, 4);
  std::vector<ZipItem> items;
  for (uint64_t i = 0; i < count; ++i) {
    const size_t name_len = get_le(zip, pos + 28, 2);
    const size_t size = get_le(zip, pos + 24, 4);
    const size_t lho = get_le(zip, pos + 42, 4);
    ZipItem it;
    it.name = zip.substr(pos + 46, name_len);
    const size_t start = lho + 30 + get_le(zip, lho + 26, 2) + get_le(zip, lho + 28, 2);
    it.data = zip.substr(start, size);
    items.push_back(it);
    pos += 46 + name_len + get_le(zip, pos + 30, 2) + get_le(zip, pos + 32, 2);
  }
  return items;
}

void push_tensor(Pickle& p, const Spec& s) {
  if (s.as_parameter) p.global("torch._utils", "_rebuild_parameter").op('(');
  p.global("torch._utils", "_rebuild_tensor_v2").op('(');
  p.op('(').str("storage").global("torch", s.storage_type).str(s.storage_key).str("cpu");
  p.integer(s.numel).op('t').op('Q');
  p.integer(s.offset).ints(s.shape).ints(s.stride).op(0x89);
  p.global("collections", "OrderedDict").op(')').op('R');
  p.op('t').op('R');
  if (s.as_parameter)
    p.op(0x89).global("collections", "OrderedDict").op(')').op('R').op('t').op('R');
}

std::string state_dict_pickle(const std::vector<Spec>& specs) {
  Pickle p;
  p.op('}').op('(');
  for (const Spec& s : specs) {
    p.str(s.key);
    push_tensor(p, s);
  }
  return p.op('u').stop().b;
}

std::string checkpoint(const std::string& pkl,
                       const std::vector<std::pair<std::string, std::string>>& storages,
                       const ZipOptions& opt) {
  std::vector<ZipItem> items{{"archive/data.pkl", pkl}, {"archive/byteorder", "little"}};
  for (const auto& [key, bytes] : storages) items.push_back({"archive/data/" + key, bytes});
  items.push_back({"archive/version", "3\n"});
  return make_zip(items, opt);
}

}  // namespace eagle2::test::torch_archive
