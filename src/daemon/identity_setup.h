// Daemon start-up: checks the HTTPS/identity options and loads (or creates) the identity.
#pragma once

#include "daemon/options.h"

#include <opendht/crypto.h>

#include <memory>
#include <string>

namespace dhtgate::daemon {

/// Checks option combinations (--https-port/--identity-create/--no-http need --identity...) and,
/// with --identity, loads PATH.pem + PATH.crt (creating them with --identity-create when neither
/// exists). On success `identity` is set (null without --identity). On failure returns false with
/// a one-line reason naming the file (missing, unreadable, corrupt, wrong password, mismatched).
/// Never throws. Creating an RSA 4096 identity blocks for a few seconds.
bool setupIdentity(const Options& options, std::shared_ptr<dht::crypto::Identity>& identity, std::string& error,
                   bool* created = nullptr);

} // namespace dhtgate::daemon
