// File side of state_store.h: reading, atomic writing and quarantining of state files.
#include "state/state_store.h"

#include "dhtgate/error.h"

#include <fmt/format.h>

#include <cerrno>
#include <cstring>
#include <ctime>
#include <vector>

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace dhtgate::state {
namespace {

std::string errnoText(int err) { return std::strerror(err); }

// Closes a descriptor on scope exit (the error paths below are many).
class Fd {
public:
    explicit Fd(int fd) : fd_(fd) {}
    ~Fd() { reset(); }
    Fd(const Fd&) = delete;
    Fd& operator=(const Fd&) = delete;
    int get() const { return fd_; }
    int release() { int fd = fd_; fd_ = -1; return fd; }
    void reset() {
        if (fd_ >= 0)
            ::close(fd_);
        fd_ = -1;
    }

private:
    int fd_;
};

std::string directoryOf(const std::string& path) {
    auto slash = path.find_last_of('/');
    if (slash == std::string::npos)
        return ".";
    if (slash == 0)
        return "/";
    return path.substr(0, slash);
}

bool writeAll(int fd, std::string_view bytes) {
    while (!bytes.empty()) {
        ssize_t n = ::write(fd, bytes.data(), bytes.size());
        if (n < 0) {
            if (errno == EINTR)
                continue;
            return false;
        }
        bytes.remove_prefix(static_cast<std::size_t>(n));
    }
    return true;
}

std::error_code ioError(std::string* message, std::string text) {
    if (message)
        *message = std::move(text);
    return errc::state_io;
}

} // namespace

LoadResult load(const std::string& path, std::int64_t now) {
    LoadResult out;
    Fd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
    if (fd.get() < 0) {
        int err = errno;
        if (err == ENOENT) {
            out.file_missing = true;
            return out;
        }
        out.error = errc::state_io;
        out.message = fmt::format("cannot open state file {}: {}", path, errnoText(err));
        return out;
    }
    std::string bytes;
    struct stat st {};
    if (::fstat(fd.get(), &st) == 0 && st.st_size > 0)
        bytes.reserve(static_cast<std::size_t>(st.st_size));
    std::vector<char> chunk(64 * 1024);
    for (;;) {
        ssize_t n = ::read(fd.get(), chunk.data(), chunk.size());
        if (n == 0)
            break;
        if (n < 0) {
            if (errno == EINTR)
                continue;
            out.error = errc::state_io;
            out.message = fmt::format("cannot read state file {}: {}", path, errnoText(errno));
            return out;
        }
        bytes.append(chunk.data(), static_cast<std::size_t>(n));
    }
    out = decode(bytes, now);
    if (out.error)
        out.message = fmt::format("state file {} is unusable: {}", path, out.message);
    return out;
}

std::size_t removeStaleTemporaries(const std::string& path) {
    // Exactly the names writeFileAtomically creates: "<name>.tmp." + 6 mkstemp characters.
    auto slash = path.find_last_of('/');
    std::string prefix = (slash == std::string::npos ? path : path.substr(slash + 1)) + ".tmp.";
    std::string dirPath = directoryOf(path);
    std::size_t removed = 0;
    if (DIR* dir = ::opendir(dirPath.c_str())) {
        while (const dirent* e = ::readdir(dir)) {
            std::string_view name(e->d_name);
            if (name.size() == prefix.size() + 6 && name.substr(0, prefix.size()) == prefix &&
                ::unlinkat(::dirfd(dir), e->d_name, 0) == 0)
                ++removed;
        }
        ::closedir(dir);
    }
    return removed;
}

LoadResult loadOrMoveAside(const std::string& path, std::int64_t now) {
    removeStaleTemporaries(path);
    auto out = load(path, now);
    if (!out.error)
        return out;
    std::error_code ec;
    out.moved_to = moveAside(path, now, ec);
    if (ec)
        out.message += fmt::format("; moving it aside failed too ({}), so it must be removed by hand", ec.message());
    else
        out.message += fmt::format("; kept as {}", out.moved_to);
    return out;
}

std::error_code writeFileAtomically(const std::string& path, std::string_view bytes, std::string* message) {
    // mkstemp creates the file with mode 0600: push tokens are private to the gateway.
    std::string tmp = path + ".tmp.XXXXXX";
    Fd fd(::mkstemp(tmp.data()));
    if (fd.get() < 0)
        return ioError(message, fmt::format("cannot create a temporary file beside {}: {}", path, errnoText(errno)));
    auto failAndUnlink = [&](const char* step) {
        int err = errno;
        fd.reset();
        ::unlink(tmp.c_str());
        return ioError(message, fmt::format("cannot save state to {}: {} failed: {}", path, step, errnoText(err)));
    };
    if (!writeAll(fd.get(), bytes))
        return failAndUnlink("write");
    if (::fsync(fd.get()) != 0)
        return failAndUnlink("fsync");
    if (::close(fd.release()) != 0)
        return failAndUnlink("close");
    if (::rename(tmp.c_str(), path.c_str()) != 0)
        return failAndUnlink("rename");
    // The rename is durable only once the directory entry is on disk.
    Fd dir(::open(directoryOf(path).c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (dir.get() < 0 || ::fsync(dir.get()) != 0)
        return ioError(message, fmt::format("saved {} but could not fsync its directory: {}", path, errnoText(errno)));
    return {};
}

std::string moveAside(const std::string& path, std::int64_t now, std::error_code& ec) {
    ec.clear();
    std::time_t t = static_cast<std::time_t>(now);
    std::tm tm {};
    ::gmtime_r(&t, &tm);
    char stamp[32];
    std::strftime(stamp, sizeof stamp, "%Y%m%dT%H%M%SZ", &tm);
    std::string base = fmt::format("{}.corrupt-{}", path, stamp);
    for (int attempt = 0; attempt < 1000; ++attempt) {
        std::string candidate = attempt == 0 ? base : fmt::format("{}-{}", base, attempt);
        // link() fails with EEXIST instead of replacing, so an earlier quarantined file is never lost.
        if (::link(path.c_str(), candidate.c_str()) == 0) {
            ::unlink(path.c_str());
            return candidate;
        }
        int err = errno;
        if (err == EEXIST)
            continue;
        // Filesystems without hard links: check, then rename (a tiny race, acceptable here).
        if (err == EPERM || err == EOPNOTSUPP || err == EXDEV) {
            struct stat st {};
            if (::stat(candidate.c_str(), &st) == 0)
                continue;
            if (::rename(path.c_str(), candidate.c_str()) == 0)
                return candidate;
            err = errno;
        }
        ec = std::error_code(err, std::generic_category());
        return {};
    }
    ec = std::make_error_code(std::errc::file_exists);
    return {};
}

} // namespace dhtgate::state
