// The type-erased face of one RESTinio listener (plain HTTP or HTTPS), so that ProxyServer holds
// either without seeing RESTinio's traits. RestinioServer<Traits> (server_traits.h) implements it.
#pragma once

#include <functional>

namespace dhtgate::server {

/// One RESTinio listener (plain or TLS) with its traits erased; see RestinioServer in server_traits.h.
class ListenerServer {
public:
    virtual ~ListenerServer() = default;
    virtual void openSync() = 0;  ///< throws on bind failure
    virtual void closeSync() = 0; ///< on the io thread (single-thread) or before/after io runs
    virtual void closeAsync(std::function<void()> done) = 0;
};

} // namespace dhtgate::server
