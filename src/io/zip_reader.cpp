#include "io/zip_reader.h"

#include <cstring>
#include <utility>

#include "core/error.h"
#include "io/byte_reading.h"

namespace eagle2::detail {
namespace {

constexpr uint32_t kLocalSig = 0x04034b50;
constexpr uint32_t kCentralSig = 0x02014b50;
constexpr uint32_t kEocdSig = 0x06054b50;
constexpr uint32_t kZip64EocdSig = 0x06064b50;
constexpr uint32_t kZip64LocatorSig = 0x07064b50;
constexpr uint64_t kEocdSize = 22;
constexpr uint64_t kCentralSize = 46;
constexpr uint64_t kLocalSize = 30;
constexpr uint64_t kZip64EocdSize = 56;
constexpr uint64_t kZip64LocatorSize = 20;

// Fills the fields that the central directory saturated (0xFFFFFFFF / 0xFFFF) from the zip64
// extra field (id 1), which lists only those, in this fixed order.
void apply_zip64_extra(const std::string& path, const std::string& shown, const unsigned char* p,
                       uint64_t len, uint64_t* usize, uint64_t* csize, uint64_t* lho,
                       uint64_t* disk) {
  while (len >= 4) {
    const uint32_t id = rd16(p);
    const uint64_t sz = rd16(p + 2);
    if (sz > len - 4) fail(path, ": zip entry '", shown, "' has a malformed extra field");
    if (id == 1) {
      const unsigned char* q = p + 4;
      uint64_t left = sz;
      auto take = [&](uint64_t* field, uint64_t saturated, int width) {
        if (*field != saturated) return;
        if (left < static_cast<uint64_t>(width)) {
          fail(path, ": zip entry '", shown, "' has a zip64 extra field too short for its sizes");
        }
        *field = rd_le(q, width);
        q += width;
        left -= width;
      };
      take(usize, 0xffffffffu, 8);
      take(csize, 0xffffffffu, 8);
      take(lho, 0xffffffffu, 8);
      take(disk, 0xffffu, 4);
      return;
    }
    p += 4 + sz;
    len -= 4 + sz;
  }
  fail(path, ": zip entry '", shown, "' needs a zip64 extra field but has none");
}

}  // namespace

ZipArchive read_zip(const std::string& path, const unsigned char* data, uint64_t size) {
  if (size < kEocdSize) {
    fail(path, ": not a zip archive (", size, " bytes, no end of central directory record)");
  }
  // The record sits at the end, after at most a 64 KiB comment. Requiring the comment length to
  // reach exactly the end keeps a signature inside the comment or the data from being taken.
  const uint64_t last = size - kEocdSize;
  const uint64_t lowest = last > 0xffff ? last - 0xffff : 0;
  uint64_t eocd = UINT64_MAX;
  for (uint64_t pos = last + 1; pos-- > lowest;) {
    if (rd32(data + pos) == kEocdSig && pos + kEocdSize + rd16(data + pos + 20) == size) {
      eocd = pos;
      break;
    }
  }
  if (eocd == UINT64_MAX) fail(path, ": not a zip archive (no end of central directory record)");

  const unsigned char* e = data + eocd;
  uint64_t disk = rd16(e + 4), cd_disk = rd16(e + 6);
  uint64_t count_here = rd16(e + 8), count = rd16(e + 10);
  uint64_t cd_size = rd32(e + 12), cd_offset = rd32(e + 16);
  uint64_t cd_limit = eocd;  // the central directory ends before the records that describe it

  if (eocd >= kZip64LocatorSize && rd32(e - kZip64LocatorSize) == kZip64LocatorSig) {
    const unsigned char* loc = e - kZip64LocatorSize;
    if (rd32(loc + 4) != 0 || rd32(loc + 16) != 1) {
      fail(path, ": multi-disk zip archives are not supported");
    }
    const uint64_t rec = rd64(loc + 8);
    const uint64_t rec_limit = eocd - kZip64LocatorSize;
    if (rec > rec_limit || rec_limit - rec < kZip64EocdSize) {
      fail(path, ": zip64 end of central directory record (offset ", rec,
           ") lies outside the file");
    }
    const unsigned char* r = data + rec;
    if (rd32(r) != kZip64EocdSig) {
      fail(path, ": no zip64 end of central directory record at offset ", rec);
    }
    disk = rd32(r + 16);
    cd_disk = rd32(r + 20);
    count_here = rd64(r + 24);
    count = rd64(r + 32);
    cd_size = rd64(r + 40);
    cd_offset = rd64(r + 48);
    cd_limit = rec;
  } else if (count == 0xffff || cd_size == 0xffffffffu || cd_offset == 0xffffffffu) {
    fail(path, ": zip end of central directory record needs zip64, but there is no zip64 locator");
  }
  if (disk != 0 || cd_disk != 0 || count_here != count) {
    fail(path, ": multi-disk zip archives are not supported");
  }
  if (cd_offset > cd_limit || cd_size > cd_limit - cd_offset) {
    fail(path, ": zip central directory (", cd_size, " bytes at offset ", cd_offset,
         ") lies outside the file");
  }
  if (count > cd_size / kCentralSize) {
    fail(path, ": zip central directory claims ", count, " entries but holds only ", cd_size,
         " bytes");
  }

  ZipArchive zip;
  zip.entries.reserve(count);
  const uint64_t cd_end = cd_offset + cd_size;
  uint64_t pos = cd_offset;
  for (uint64_t i = 0; i < count; ++i) {
    if (cd_end - pos < kCentralSize || rd32(data + pos) != kCentralSig) {
      fail(path, ": zip central directory entry ", i, " (offset ", pos, ") is malformed");
    }
    const unsigned char* c = data + pos;
    const uint32_t flags = rd16(c + 8);
    const uint32_t method = rd16(c + 10);
    uint64_t csize = rd32(c + 20), usize = rd32(c + 24);
    const uint64_t name_len = rd16(c + 28), extra_len = rd16(c + 30), comment_len = rd16(c + 32);
    uint64_t entry_disk = rd16(c + 34);
    uint64_t lho = rd32(c + 42);
    if (cd_end - pos - kCentralSize < name_len + extra_len + comment_len) {
      fail(path, ": zip central directory entry ", i, " (offset ", pos,
           ") runs past the central directory");
    }
    ZipEntry entry;
    entry.name.assign(reinterpret_cast<const char*>(c + kCentralSize), name_len);
    const std::string shown = printable(entry.name);
    if (usize == 0xffffffffu || csize == 0xffffffffu || lho == 0xffffffffu ||
        entry_disk == 0xffffu) {
      apply_zip64_extra(path, shown, c + kCentralSize + name_len, extra_len, &usize, &csize, &lho,
                        &entry_disk);
    }
    if (entry_disk != 0) fail(path, ": multi-disk zip archives are not supported");
    if (flags & 1u) {
      fail(path, ": zip entry '", shown, "' is encrypted; encrypted entries are not supported");
    }
    if (method != 0) {
      fail(path, ": zip entry '", shown, "' is compressed (method ", method,
           "); only stored entries are supported");
    }
    if (csize != usize) {
      fail(path, ": zip entry '", shown, "' is stored but its compressed size (", csize,
           ") differs from its size (", usize, ")");
    }

    // The data starts after the local header, whose extra field (torch pads with it to align
    // the data) may differ in length from the central one. Its size fields are not used: torch
    // sets the data-descriptor flag and leaves them zero.
    if (lho > size || size - lho < kLocalSize || rd32(data + lho) != kLocalSig) {
      fail(path, ": zip entry '", shown, "' has no local header at offset ", lho);
    }
    const unsigned char* l = data + lho;
    const uint64_t local_name_len = rd16(l + 26), local_extra_len = rd16(l + 28);
    const uint64_t start = lho + kLocalSize + local_name_len + local_extra_len;
    if (start > size || usize > size - start) {
      fail(path, ": zip entry '", shown, "' (", usize, " bytes at offset ", start,
           ") runs past the end of the file (", size, " bytes)");
    }
    if (local_name_len != name_len ||
        std::memcmp(l + kLocalSize, c + kCentralSize, name_len) != 0 ||
        ((rd16(l + 6) ^ flags) & 1u) != 0 || rd16(l + 8) != method) {
      fail(path, ": zip entry '", shown,
           "' has a local header that disagrees with the central directory");
    }
    entry.offset = start;
    entry.size = usize;
    if (!zip.by_name.emplace(entry.name, zip.entries.size()).second) {
      fail(path, ": zip archive has two entries named '", shown, "'");
    }
    zip.entries.push_back(std::move(entry));
    pos += kCentralSize + name_len + extra_len + comment_len;
  }
  return zip;
}

}  // namespace eagle2::detail
