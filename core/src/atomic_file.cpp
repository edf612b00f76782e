#include "gemflow/atomic_file.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <ostream>
#include <streambuf>
#include <vector>

#include <fmt/format.h>

#include "gemflow/error.hpp"

namespace gemflow {

namespace fs = std::filesystem;

namespace {

[[noreturn]] void fail(const fs::path& shown, int err) {
  throw Error(fmt::format("cannot write {}: {}", shown.string(), std::strerror(err)));
}

// A stream buffer over a file descriptor that keeps the errno of the first failed write (an
// std::ofstream says only that it failed, and loses a failure in its destructor's flush).
class FdBuf final : public std::streambuf {
 public:
  explicit FdBuf(int fd) : fd_(fd), buf_(1 << 16) { setp(buf_.data(), buf_.data() + buf_.size()); }
  ~FdBuf() override = default;
  [[nodiscard]] int error() const noexcept { return error_; }

 protected:
  int_type overflow(int_type ch) override {
    if (!drain()) return traits_type::eof();
    if (!traits_type::eq_int_type(ch, traits_type::eof())) {
      *pptr() = traits_type::to_char_type(ch);
      pbump(1);
    }
    return traits_type::not_eof(ch);
  }
  int sync() override { return drain() ? 0 : -1; }
  std::streamsize xsputn(const char* s, std::streamsize n) override {
    if (n >= static_cast<std::streamsize>(buf_.size())) {  // large blocks: straight through
      if (!drain() || !put(s, static_cast<std::size_t>(n))) return 0;
      return n;
    }
    return std::streambuf::xsputn(s, n);
  }

 private:
  bool put(const char* p, std::size_t n) {
    while (n > 0) {
      const ssize_t w = ::write(fd_, p, n);
      if (w < 0) {
        if (errno == EINTR) continue;
        if (error_ == 0) error_ = errno;
        return false;
      }
      p += w;
      n -= static_cast<std::size_t>(w);
    }
    return true;
  }
  bool drain() {
    if (error_ != 0) return false;
    const std::size_t n = static_cast<std::size_t>(pptr() - pbase());
    setp(buf_.data(), buf_.data() + buf_.size());
    return put(buf_.data(), n);
  }

  int fd_;
  std::vector<char> buf_;
  int error_ = 0;
};

// Syncs and closes `fd`; the errno of the first failure, 0 when both succeeded.
int sync_and_close(int fd) {
  int err = ::fsync(fd) != 0 && errno != EINVAL && errno != EROFS ? errno : 0;  // EINVAL: a pipe, /dev/null
  if (::close(fd) != 0 && err == 0 && errno != EINTR) err = errno;
  return err;
}

}  // namespace

void write_stream_to(const fs::path& tmp, const std::function<void(std::ostream& out)>& write, const fs::path& shown) {
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) fail(shown, errno);
  int err = 0;
  {
    FdBuf buf(fd);
    std::ostream out(&buf);
    try {
      write(out);
    } catch (...) {
      ::close(fd);
      throw;
    }
    out.flush();
    err = buf.error();
    if (err == 0 && !out) err = EIO;  // a failure of the writer's own formatting, not of the disk
  }
  if (err != 0) {
    ::close(fd);
    fail(shown, err);
  }
  if (const int e = sync_and_close(fd)) fail(shown, e);
}

void sync_written_file(const fs::path& file, const fs::path& shown) {
  const int fd = ::open(file.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) fail(shown, errno);
  if (const int e = sync_and_close(fd)) fail(shown, e);
}

void write_file_atomically(const fs::path& file, const std::function<void(std::ostream& out)>& write) {
  static std::atomic<unsigned> counter{0};
  const fs::path dir = file.parent_path();
  const fs::path tmp = dir / fmt::format(".{}.tmp{}-{}", file.filename().string(), ::getpid(), counter++);
  try {
    write_stream_to(tmp, write, file);
  } catch (...) {
    std::error_code ec;
    fs::remove(tmp, ec);
    throw;
  }
  if (::rename(tmp.c_str(), file.c_str()) != 0) {
    const int err = errno;
    std::error_code ec;
    fs::remove(tmp, ec);
    fail(file, err);
  }
  // the rename itself reaches the disk with the folder (best effort: not every file system can)
  const int dfd = ::open(dir.empty() ? "." : dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd >= 0) {
    (void)::fsync(dfd);
    ::close(dfd);
  }
}

void write_file_atomically(const fs::path& file, std::string_view text) {
  write_file_atomically(file,
                        [&](std::ostream& out) { out.write(text.data(), static_cast<std::streamsize>(text.size())); });
}

}  // namespace gemflow
