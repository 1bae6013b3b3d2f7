#include "dht/asio_datagram_socket.h"

#include <asio/io_context.hpp>
#include <asio/ip/udp.hpp>
#include <asio/ip/v6_only.hpp>
#include <asio/post.hpp>

#include <netdb.h>
#include <sys/socket.h>

#include <array>
#include <cerrno>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <system_error>

namespace dhtgate::dht_io {

namespace {

constexpr std::size_t kMaxDatagram = 64 * 1024; // largest UDP payload
constexpr std::size_t kMaxBatch = 64;           // datagrams handed to the DHT per onReceived()
constexpr unsigned kMaxConsecutiveErrors = 100;

dht::SockAddr toSockAddr(const asio::ip::udp::endpoint& ep) {
    return dht::SockAddr(ep.data(), static_cast<socklen_t>(ep.size()));
}

} // namespace

/// What the pending receive handlers hold: the asio sockets outlive the DatagramSocket object
/// (the DHT destroys it when the runner is joined) until their aborted handlers have run.
struct AsioDatagramSocket::Shared : std::enable_shared_from_this<Shared> {
    struct Leg {
        explicit Leg(asio::io_context& io) : socket(io) {}
        asio::ip::udp::socket socket;
        asio::ip::udp::endpoint from;
        std::array<std::uint8_t, kMaxDatagram> buffer{};
        unsigned errors{0}; ///< consecutive receive errors
    };

    Shared(asio::io_context& context, Logger logger) : io(context), log(std::move(logger)) {}

    asio::io_context& io;
    Logger log;
    std::optional<Leg> v4; // io thread only (after construction)
    std::optional<Leg> v6;
    bool closed{false};
    std::function<void()> onPackets;

    std::mutex ownerMutex; // guards owner: the destructor may run on another thread
    AsioDatagramSocket* owner{nullptr};

    void receive(Leg& leg) {
        leg.socket.async_receive_from(
            asio::buffer(leg.buffer), leg.from,
            [self = shared_from_this(), &leg](const std::error_code& ec, std::size_t n) {
                if (self->closed || ec == asio::error::operation_aborted)
                    return;
                if (ec) {
                    // Transient errors are retried; a socket that keeps failing is given up
                    // rather than spinning the io thread.
                    if (++leg.errors >= kMaxConsecutiveErrors) {
                        self->log.error("[dht-socket] receive keeps failing ({}): socket closed", ec.message());
                        std::error_code ignored;
                        leg.socket.close(ignored);
                        return;
                    }
                    self->log.debug("[dht-socket] receive: {}", ec.message());
                } else {
                    leg.errors = 0;
                    self->batch(leg, n);
                    if (self->onPackets && !self->closed)
                        self->onPackets();
                }
                if (!self->closed)
                    self->receive(leg);
            });
    }

    /// Hands the datagram in leg.buffer, plus those already queued in the kernel, to the DHT.
    void batch(Leg& leg, std::size_t first) {
        std::lock_guard<std::mutex> lock(ownerMutex);
        if (!owner)
            return;
        dht::net::PacketList packets;
        std::size_t size = first;
        const auto now = dht::clock::now();
        for (std::size_t count = 0;;) {
            auto one = owner->getNewPacket();
            auto& p = one.front();
            p.data.assign(leg.buffer.data(), leg.buffer.data() + size);
            p.from = toSockAddr(leg.from);
            p.received = now;
            packets.splice(packets.end(), one);
            if (++count == kMaxBatch)
                break;
            std::error_code ec;
            size = leg.socket.receive_from(asio::buffer(leg.buffer), leg.from, 0, ec);
            if (ec)
                break; // would_block: the queue is drained
        }
        owner->deliver(std::move(packets));
    }

    void close() {
        closed = true;
        std::error_code ignored;
        if (v4)
            v4->socket.close(ignored);
        if (v6)
            v6->socket.close(ignored);
    }
};

AsioDatagramSocket::AsioDatagramSocket(asio::io_context& io, std::uint16_t port, const std::string& address, Logger log)
    : shared_(std::make_shared<Shared>(io, std::move(log))) {
    using asio::ip::udp;
    std::optional<asio::ip::address> only;
    if (!address.empty()) {
        std::error_code ec;
        only = asio::ip::make_address(address, ec);
        if (ec)
            throw std::invalid_argument("invalid DHT bind address '" + address + "'");
    }
    auto open = [&](std::optional<Shared::Leg>& leg, const asio::ip::address& addr,
                    std::uint16_t p) -> std::error_code {
        leg.emplace(io);
        std::error_code ec;
        leg->socket.open(addr.is_v6() ? udp::v6() : udp::v4(), ec);
        if (!ec && addr.is_v6())
            leg->socket.set_option(asio::ip::v6_only(true), ec);
        if (!ec)
            leg->socket.bind(udp::endpoint(addr, p), ec);
        if (!ec)
            leg->socket.non_blocking(true, ec);
        if (ec)
            leg.reset();
        return ec;
    };

    std::error_code ec4, ec6;
    if (!only || only->is_v4()) {
        ec4 = open(shared_->v4, only ? *only : asio::ip::address(asio::ip::address_v4::any()), port);
        if (ec4)
            throw std::system_error(ec4, "cannot bind the DHT's UDP port " + std::to_string(port));
        bound4_ = toSockAddr(shared_->v4->socket.local_endpoint());
    }
    if (!only || only->is_v6()) {
        const auto addr6 = only ? *only : asio::ip::address(asio::ip::address_v6::any());
        // The same port as IPv4 when possible, like UdpSocket.
        const std::uint16_t p6 = bound4_ ? bound4_.getPort() : port;
        ec6 = open(shared_->v6, addr6, p6);
        if (ec6 && port == 0 && p6 != 0)
            ec6 = open(shared_->v6, addr6, 0);
        if (ec6 && only)
            throw std::system_error(ec6, "cannot bind the DHT's UDP port " + std::to_string(port));
        if (ec6)
            shared_->log.info("[dht-socket] no IPv6 ({}): IPv4 only", ec6.message());
        else
            bound6_ = toSockAddr(shared_->v6->socket.local_endpoint());
    }
    shared_->owner = this;
    if (shared_->v4)
        shared_->receive(*shared_->v4);
    if (shared_->v6)
        shared_->receive(*shared_->v6);
}

AsioDatagramSocket::~AsioDatagramSocket() {
    {
        std::lock_guard<std::mutex> lock(shared_->ownerMutex);
        shared_->owner = nullptr;
    }
    stop();
}

void AsioDatagramSocket::setOnPackets(std::function<void()> cb) {
    shared_->onPackets = std::move(cb);
}

void AsioDatagramSocket::deliver(dht::net::PacketList&& packets) {
    onReceived(std::move(packets));
}

int AsioDatagramSocket::sendTo(const dht::SockAddr& dest, const std::uint8_t* data, std::size_t size, bool replied) {
    if (!dest)
        return EFAULT;
    auto& leg = dest.getFamily() == AF_INET6 ? shared_->v6 : shared_->v4;
    if (!leg || shared_->closed)
        return EAFNOSUPPORT;
    int flags = MSG_DONTWAIT | MSG_NOSIGNAL;
#ifdef MSG_CONFIRM
    if (replied)
        flags |= MSG_CONFIRM;
#else
    (void)replied;
#endif
    if (::sendto(leg->socket.native_handle(), data, size, flags, dest.get(), dest.getLength()) < 0) {
        const int err = errno;
        // EAGAIN: the kernel buffer is full; the datagram is dropped (the DHT retries on timeout).
        shared_->log.trace("[dht-socket] cannot send {} bytes to {}: {}", size, dest.toString(),
                           std::error_code(err, std::generic_category()).message());
        return err;
    }
    return 0;
}

std::vector<dht::SockAddr> AsioDatagramSocket::resolve(const std::string& host, const std::string& service) {
    addrinfo hints{};
    hints.ai_socktype = SOCK_DGRAM;
    hints.ai_flags = AI_NUMERICHOST | AI_NUMERICSERV;
    addrinfo* info = nullptr;
    std::vector<dht::SockAddr> out;
    const int rc = ::getaddrinfo(host.c_str(), service.empty() ? nullptr : service.c_str(), &hints, &info);
    if (rc != 0) {
        shared_->log.warn("[dht-socket] '{}' is not a numeric address (names are resolved before, not here)", host);
        return out;
    }
    for (auto* i = info; i; i = i->ai_next)
        out.emplace_back(i->ai_addr, static_cast<socklen_t>(i->ai_addrlen));
    ::freeaddrinfo(info);
    return out;
}

void AsioDatagramSocket::stop() {
    if (shared_->io.get_executor().running_in_this_thread())
        shared_->close();
    else
        asio::post(shared_->io, [shared = shared_] { shared->close(); });
}

} // namespace dhtgate::dht_io
