// listen_load: small helpers shared by the workloads (arguments, /proc readings, statistics,
// JSON output). Nothing here touches the network.
#pragma once

#include <chrono>
#include <map>
#include <string>
#include <vector>

namespace bench {

using Clock = std::chrono::steady_clock;

double secondsSince(Clock::time_point t0);
inline std::chrono::milliseconds millis(double seconds)
{
    return std::chrono::milliseconds(static_cast<long long>(seconds * 1000));
}

// `--name value` pairs; every option takes exactly one value.
class Args {
public:
    Args(int argc, char** argv, int first);
    std::string str(const std::string& name, const std::string& def) const;
    long num(const std::string& name, long def) const;
    double real(const std::string& name, double def) const;
    bool ok() const { return ok_; }

private:
    std::map<std::string, std::string> values_;
    bool ok_ {true};
};

struct HostPort {
    std::string host {"127.0.0.1"};
    unsigned short port {0};
};
// Accepts "http://127.0.0.1:8080[/...]" or "127.0.0.1:8080".
HostPort parseUrl(const std::string& url);

// CPU time used so far by a server process, in seconds: the sum of its threads' run time from
// /proc/PID/task/*/schedstat (nanosecond resolution), or utime+stime+cutime+cstime from
// /proc/PID/stat when schedstat is unavailable. Negative when pid <= 0 or unreadable.
double processCpuSeconds(int pid);
// VmRSS of the process in KiB, negative when unknown.
long processRssKb(int pid);
// Raises RLIMIT_NOFILE to its hard maximum; returns the new soft limit.
long raiseNofileLimit();

std::string randomHex(std::size_t chars);

struct Percentiles {
    std::size_t count {0};
    double p50 {0}, p99 {0}, max {0};
};
Percentiles percentiles(std::vector<double> samples);

// Builds one flat-ish JSON object, printed as a single line.
class JsonOut {
public:
    JsonOut& add(const std::string& key, double v);
    JsonOut& add(const std::string& key, long v);
    JsonOut& add(const std::string& key, const std::string& v);
    JsonOut& addRaw(const std::string& key, const std::string& json);
    JsonOut& addPercentiles(const std::string& key, const Percentiles& p, double scale);
    std::string str() const { return "{" + body_ + "}"; }

private:
    void sep();
    std::string body_;
};

} // namespace bench
