// Command-line options of the dhtgate daemon, parsed by a small table-driven parser so other
// components can add their options (one entry in the table in options.cpp plus a member here).
#pragma once

#include "dhtgate/config.h"
#include "dhtgate/logger.h"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace dhtgate::daemon {

struct Options {
    std::uint16_t dht_port {4222};
    std::vector<std::string> bootstrap; ///< "HOST:PORT" ("[v6]:PORT" for IPv6 literals)
    ServerConfig server;                ///< address/port/threads/limits of the HTTP server
    LogLevel log_level {LogLevel::info};
    /// --dht-thread: a threaded DhtRunner (the pre-DhtDriver mode); implied by server.threads > 1.
    bool dht_thread {false};
    // HTTPS / identity (loaded by daemon/identity_setup.h; server.https_port holds --https-port)
    std::string identity;          ///< --identity PATH: PATH.pem + PATH.crt
    std::string identity_password; ///< --identity-password (or DHTGATE_IDENTITY_PASSWORD)
    bool identity_create {false};  ///< --identity-create: generate PATH when it does not exist
    bool help {false};
};

/// Parses argv[1..]. Returns nullopt and a one-line message in `error` on a bad option.
/// Accepts "--name value" and "--name=value".
std::optional<Options> parseOptions(int argc, const char* const* argv, std::string& error);

/// The --help text (every option, its argument and default).
std::string usage(std::string_view program);

/// Splits "HOST:PORT" / "[V6]:PORT". False if there is no port or it is not a number.
bool splitHostPort(std::string_view text, std::string& host, std::string& port);

} // namespace dhtgate::daemon
