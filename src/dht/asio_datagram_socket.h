// A dht::net::DatagramSocket on asio UDP sockets of a given io_context: no thread of its own.
//
// Received datagrams are read by an async_receive_from loop on the io thread, batched (everything
// already queued in the kernel, up to a limit) and handed to the DhtRunner through onReceived();
// then the `onPackets` hook runs (DhtDriver pumps the runner there). sendTo() is a synchronous
// non-blocking send: a datagram that does not fit the kernel buffer (EAGAIN) is dropped, as UDP
// may, and the errno value is returned (0 on success), like dht::net::UdpSocket.
//
// Thread contract: construct, sendTo() and the receive loop on the io thread (or before io runs).
// stop() and the destructor may run on any thread: off the io thread the close is posted to it;
// the receive handler never touches a destroyed socket (it goes through shared state that the
// destructor detaches under a mutex). resolve() only accepts numeric addresses, so the DHT's
// bootstrap resolution can never block the io thread on DNS (resolve names before, asynchronously).
#pragma once

#include "dhtgate/logger.h"

#include <opendht/network_utils.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace asio {
class io_context;
}

namespace dhtgate::dht_io {

class AsioDatagramSocket : public dht::net::DatagramSocket {
public:
    /// Binds UDP `port` (0: any) on `address`: "" binds 0.0.0.0 and, if available, [::] on the
    /// same port; an IPv4 literal binds only IPv4, an IPv6 literal only IPv6. Throws
    /// std::system_error if nothing can be bound, std::invalid_argument on a bad address.
    AsioDatagramSocket(asio::io_context& io, std::uint16_t port, const std::string& address, Logger log);
    ~AsioDatagramSocket() override;

    /// Called on the io thread after each batch of datagrams was handed to the DHT.
    void setOnPackets(std::function<void()> cb);

    int sendTo(const dht::SockAddr& dest, const std::uint8_t* data, std::size_t size, bool replied) override;
    bool hasIPv4() const override { return bound4_.getFamily() == AF_INET; }
    bool hasIPv6() const override { return bound6_.getFamily() == AF_INET6; }
    const dht::SockAddr& getBoundRef(sa_family_t family = AF_UNSPEC) const override {
        if (family == AF_INET6)
            return bound6_;
        if (family == AF_INET)
            return bound4_;
        return hasIPv4() ? bound4_ : bound6_; // AF_UNSPEC: whichever is bound
    }
    /// Numeric host and service only (no DNS on the io thread); names give an empty result.
    std::vector<dht::SockAddr> resolve(const std::string& host, const std::string& service = {}) override;
    void stop() override;

    /// Bound UDP port (IPv4's if bound, else IPv6's).
    std::uint16_t port() const { return getBoundRef().getPort(); }

private:
    struct Shared;
    void deliver(dht::net::PacketList&& packets); // from the receive loop, on the io thread

    std::shared_ptr<Shared> shared_;
    dht::SockAddr bound4_;
    dht::SockAddr bound6_;
};

} // namespace dhtgate::dht_io
