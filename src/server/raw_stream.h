// A listen stream written straight to its socket, after the connection was taken from RESTinio.
//
// Why: an idle listen stream inside RESTinio keeps a whole connection object (read buffer,
// parser, response table, header vectors, a response builder: about 6 KB), and every value sent
// to it goes through RESTinio's response machinery (a chunk header formatted per stream, a write
// group, a dispatch). A listen stream only ever writes chunks and watches for the client going
// away, so once its response starts the server takes the socket (RESTinio's connection-upgrade
// hand-off, see Request::startListenStream) and this small object writes chunks that were framed
// once for all streams (`framed`: "<hex size>\r\n<line>\r\n").
//
// Thread contract: one thread (the server's io thread; single-thread mode only), like the socket.
#pragma once

#include "server/guarded_socket.h"

#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace dhtgate::server {

class RawStream : public std::enable_shared_from_this<RawStream> {
public:
    /// `socket` lives in `owner` (kept alive with this object). `onClosed` runs once when the
    /// client goes away or the stream is closed, never from inside a call to this object.
    RawStream(GuardedSocket& socket, std::shared_ptr<void> owner, std::function<void()> onClosed);
    ~RawStream();

    /// Writes the response header, then watches the connection for its close.
    void start(std::shared_ptr<const std::string> header);
    /// Queues one pre-framed chunk. A client that stops reading is dropped past kMaxQueued bytes.
    void send(std::shared_ptr<const std::string> framed);
    /// Sends the final chunk, then closes; `written` runs once that is done (or failed).
    void end(std::function<void()> written);
    bool closed() const { return closed_; }

    static constexpr std::size_t kMaxQueued = 1024 * 1024;

    /// "<hex size>\r\n<data>\r\n".
    static std::shared_ptr<const std::string> frame(const std::string& data);

private:
    void writeNext();
    void onWritten(const std::error_code& ec);
    void readNext();
    void close();

    GuardedSocket& socket_;
    std::shared_ptr<void> owner_;
    std::function<void()> onClosed_;
    std::function<void()> endWritten_;
    std::vector<std::shared_ptr<const std::string>> queue_;    ///< waiting for the next write
    std::vector<std::shared_ptr<const std::string>> inFlight_; ///< being written
    std::vector<asio::const_buffer> buffers_;                  ///< gather list when inFlight_ > 1
    std::size_t queuedBytes_ {0};
    bool writing_ {false};
    bool ending_ {false};
    bool closed_ {false};
    char readBuffer_[32];
};

} // namespace dhtgate::server
