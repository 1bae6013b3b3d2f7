// W6: listen fan-out. Opens N listen streams on one fresh key, waits until every stream got its
// response headers, waits a short settle time (the server may register its DHT listen after the
// headers), then puts one value through a separate connection and measures, for each stream, the
// time from sending the put to the value's data appearing in the stream.
#include "keepalive_client.h"
#include "stream_pool.h"
#include "workloads.h"

#include <iostream>

namespace bench {

int runFanout(asio::io_context& io, const Args& args)
{
    const auto ep = endpointOf(args);
    const auto n = static_cast<std::size_t>(args.num("streams", 1000));
    const int pid = static_cast<int>(args.num("pid", 0));
    const std::string key = args.str("key", randomHex(40));
    const double timeout = args.real("timeout", 30);
    const double settle = args.real("settle", 0.5);

    StreamPool pool(io, ep, {key}, static_cast<std::size_t>(args.num("parallel", 256)));
    asio::steady_timer timer(io);
    auto putter = std::make_shared<KeepAliveClient>(io, ep);
    std::vector<double> latencies;
    latencies.reserve(n);
    double openSeconds = 0, cpu0 = -1, cpu1 = -1, putSeconds = -1;
    int putStatus = -1;
    bool finished = false;
    Clock::time_point t0;
    const auto start = Clock::now();

    auto finish = [&](const char* why) {
        if (finished)
            return;
        finished = true;
        if (cpu1 < 0)
            cpu1 = processCpuSeconds(pid);
        JsonOut out;
        out.add("workload", std::string("fanout")).add("streams", static_cast<long>(n))
            .add("ready", static_cast<long>(pool.ready())).add("failed", static_cast<long>(pool.failed()))
            .add("refused", static_cast<long>(pool.refused())).add("dropped", static_cast<long>(pool.dropped()))
            .add("delivered", static_cast<long>(latencies.size())).add("open_s", openSeconds)
            .add("put_status", static_cast<long>(putStatus)).add("put_ms", putSeconds * 1e3)
            .addPercentiles("latency_ms", percentiles(latencies), 1e3).add("end", std::string(why));
        if (pid > 0 && cpu0 >= 0 && !latencies.empty())
            out.add("cpu_s", cpu1 - cpu0).add("cpu_us_per_listener", (cpu1 - cpu0) * 1e6 / latencies.size());
        std::cout << out.str() << std::endl;
        timer.cancel();
        pool.closeAll();
        putter->close();
        io.stop();
    };

    pool.events().onMarker = [&](ListenStream&) {
        latencies.push_back(secondsSince(t0));
        if (latencies.size() == pool.ready()) {
            cpu1 = processCpuSeconds(pid);
            if (putStatus >= 0)
                finish("all-delivered");
        }
    };
    auto doPut = [&]() {
        const std::string marker = randomMarker();
        pool.events().marker = marker;
        cpu0 = processCpuSeconds(pid);
        t0 = Clock::now();
        putter->send(postRequest(key, valueJson(marker, "0")), [&](int status, double s, const std::string&) {
            putStatus = status;
            putSeconds = s;
            if (latencies.size() == pool.ready())
                finish("all-delivered");
        });
        timer.expires_after(millis(timeout));
        timer.async_wait([&](asio::error_code ec) {
            if (!ec)
                finish("timeout");
        });
    };

    timer.expires_after(millis(timeout * 2));
    timer.async_wait([&](asio::error_code ec) {
        if (!ec)
            finish("open-timeout");
    });
    pool.open(n, [&]() {
        openSeconds = secondsSince(start);
        if (pool.ready() == 0)
            return finish("no-stream");
        timer.expires_after(millis(settle));
        timer.async_wait([&](asio::error_code ec) {
            if (!ec)
                doPut();
        });
    });
    io.run();
    return latencies.size() == pool.ready() && pool.ready() == n ? 0 : 3;
}

} // namespace bench
