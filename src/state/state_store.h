// dhtgate: the persisted gateway state (permanent puts and push listeners) and its file format.
//
// The file is the msgpack layout of the reference server (spec §8), so a reference server's
// state can be taken over, plus one extra top-level entry "version" (kStateFormatVersion).
// A file without "version" is read as a reference file. See docs/state.md.
//
// Everything here is a plain function of its inputs: no threads, no timers, no exceptions
// escape (msgpack and libopendht throw; the functions catch and report an error instead).
#pragma once

#include "push/push_platform.h"

#include <opendht/infohash.h>
#include <opendht/value.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

namespace dhtgate::state {

/// The format version this build writes and the newest it reads. Files without a version
/// (reference layout) are version 0 and are read too.
inline constexpr std::uint32_t kStateFormatVersion = 1;

/// One permanent put (spec §6): a value the gateway keeps re-announcing until `expiry`.
struct PermanentPutRecord {
    dht::InfoHash key;
    std::shared_ptr<dht::Value> value; ///< never null in a loaded state; its id is the put's id
    std::int64_t expiry {0};           ///< wall clock, Unix seconds
    std::string client_id;             ///< "" if none
    std::string session_id;            ///< "" if none
    push::Platform platform {push::Platform::none};
    std::string token;                 ///< push token; "" = no expiry notice
    std::string topic;                 ///< "" if none
};

/// One push listener (spec §3.8, §7.1), identified by (token, key, client_id).
struct PushListenerRecord {
    std::string token;
    dht::InfoHash key;
    std::string client_id;
    std::int64_t expiry {0}; ///< wall clock, Unix seconds
    std::string session_id;
    push::Platform platform {push::Platform::none};
    std::string topic;
};

struct PersistedState {
    std::vector<PermanentPutRecord> puts;
    std::vector<PushListenerRecord> listeners;

    bool empty() const { return puts.empty() && listeners.empty(); }
};

struct LoadResult {
    PersistedState state;
    std::error_code error;        ///< errc::state_io (cannot read) or errc::state_corrupt; empty on success
    std::string message;          ///< human-readable reason, naming the file; empty on success
    std::uint32_t version {0};    ///< format version found (0 = reference layout or missing file)
    bool file_missing {false};    ///< no file: an empty state, not an error
    std::size_t dropped_expired {0}; ///< entries skipped because their expiry was before `now`
    std::string moved_to;         ///< set by loadOrMoveAside when a bad file was moved aside

    explicit operator bool() const { return !error; }
};

/// Current wall-clock time in Unix seconds.
std::int64_t unixNow();

/// Serialises `state` (version kStateFormatVersion). Puts with a null value are skipped.
/// Two puts with the same (key, value id): the later one wins.
std::string encode(const PersistedState& state);

/// Parses a whole file's bytes. Entries whose expiry is before `now` are dropped.
/// Empty input, trailing bytes, a wrong layout or an unknown version are errors.
LoadResult decode(std::string_view bytes, std::int64_t now);

/// Reads and decodes `path`. A missing file is an empty state (file_missing = true), not an error.
LoadResult load(const std::string& path, std::int64_t now);

/// Removes the temporary files a save interrupted by a crash left beside `path`
/// ("<path>.tmp.XXXXXX"). Only one process may own a state file. Returns how many were removed.
std::size_t removeStaleTemporaries(const std::string& path);

/// removeStaleTemporaries(), load(), and if the file exists but cannot be used, moves it aside (moveAside) so that a later
/// save never overwrites it; `moved_to` names the new file (empty if the move failed too, in
/// which case `message` says so).
LoadResult loadOrMoveAside(const std::string& path, std::int64_t now);

/// Writes `bytes` atomically: a temporary file in the same directory, fsync, rename over `path`,
/// fsync of the directory. On failure the temporary file is removed, `path` is untouched and the
/// returned error is errc::state_io with a reason in `*message` (if given).
std::error_code writeFileAtomically(const std::string& path, std::string_view bytes, std::string* message = nullptr);

/// encode() + writeFileAtomically().
std::error_code save(const std::string& path, const PersistedState& state, std::string* message = nullptr);

/// Renames `path` to `<path>.corrupt-<UTC timestamp>` (plus "-N" if that name exists).
/// Returns the new name, or "" with `ec` set.
std::string moveAside(const std::string& path, std::int64_t now, std::error_code& ec);

} // namespace dhtgate::state
