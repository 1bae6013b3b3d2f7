#include "load_common.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <dirent.h>
#include <fstream>
#include <random>
#include <sstream>
#include <sys/resource.h>
#include <unistd.h>

namespace bench {

double secondsSince(Clock::time_point t0)
{
    return std::chrono::duration<double>(Clock::now() - t0).count();
}

Args::Args(int argc, char** argv, int first)
{
    for (int i = first; i < argc; i += 2) {
        std::string k = argv[i];
        if (k.rfind("--", 0) != 0 || i + 1 >= argc) {
            ok_ = false;
            return;
        }
        values_[k.substr(2)] = argv[i + 1];
    }
}

std::string Args::str(const std::string& name, const std::string& def) const
{
    auto it = values_.find(name);
    return it == values_.end() ? def : it->second;
}

long Args::num(const std::string& name, long def) const
{
    auto it = values_.find(name);
    return it == values_.end() ? def : std::stol(it->second);
}

double Args::real(const std::string& name, double def) const
{
    auto it = values_.find(name);
    return it == values_.end() ? def : std::stod(it->second);
}

HostPort parseUrl(const std::string& url)
{
    HostPort hp;
    std::string s = url;
    if (auto p = s.find("://"); p != std::string::npos)
        s = s.substr(p + 3);
    s = s.substr(0, s.find('/'));
    auto colon = s.rfind(':');
    if (colon == std::string::npos)
        return hp;
    hp.host = s.substr(0, colon);
    if (hp.host.size() > 2 && hp.host.front() == '[')
        hp.host = hp.host.substr(1, hp.host.size() - 2);
    hp.port = static_cast<unsigned short>(std::stoi(s.substr(colon + 1)));
    return hp;
}

double processCpuSeconds(int pid)
{
    if (pid <= 0)
        return -1;
    const std::string dir = "/proc/" + std::to_string(pid) + "/task";
    if (DIR* d = opendir(dir.c_str())) {
        double total = 0;
        bool any = false;
        while (dirent* e = readdir(d)) {
            if (e->d_name[0] == '.')
                continue;
            std::ifstream f(dir + "/" + e->d_name + "/schedstat");
            unsigned long long ns = 0;
            if (f >> ns) {
                total += ns / 1e9;
                any = true;
            }
        }
        closedir(d);
        if (any)
            return total;
    }
    std::ifstream f("/proc/" + std::to_string(pid) + "/stat");
    std::string line;
    if (!std::getline(f, line))
        return -1;
    std::istringstream rest(line.substr(line.rfind(')') + 2));
    std::string field;
    double ticks = 0;
    for (int i = 3; i <= 17 && rest >> field; ++i)
        if (i >= 14)
            ticks += std::stod(field);
    return ticks / static_cast<double>(sysconf(_SC_CLK_TCK));
}

long processRssKb(int pid)
{
    if (pid <= 0)
        return -1;
    std::ifstream f("/proc/" + std::to_string(pid) + "/status");
    std::string line;
    while (std::getline(f, line))
        if (line.rfind("VmRSS:", 0) == 0)
            return std::stol(line.substr(6));
    return -1;
}

long raiseNofileLimit()
{
    rlimit lim {};
    if (getrlimit(RLIMIT_NOFILE, &lim) != 0)
        return -1;
    lim.rlim_cur = lim.rlim_max;
    setrlimit(RLIMIT_NOFILE, &lim);
    getrlimit(RLIMIT_NOFILE, &lim);
    return static_cast<long>(lim.rlim_cur);
}

std::string randomHex(std::size_t chars)
{
    static std::mt19937_64 rng {std::random_device {}()};
    static const char* digits = "0123456789abcdef";
    std::string s(chars, '0');
    for (auto& c : s)
        c = digits[rng() & 15];
    return s;
}

Percentiles percentiles(std::vector<double> samples)
{
    Percentiles p;
    p.count = samples.size();
    if (samples.empty())
        return p;
    std::sort(samples.begin(), samples.end());
    auto at = [&](double q) {
        auto i = static_cast<std::size_t>(std::ceil(q * samples.size())) - 1;
        return samples[std::min(i, samples.size() - 1)];
    };
    p.p50 = at(0.50);
    p.p99 = at(0.99);
    p.max = samples.back();
    return p;
}

void JsonOut::sep()
{
    if (!body_.empty())
        body_ += ',';
}

JsonOut& JsonOut::add(const std::string& key, double v)
{
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.9g", std::isfinite(v) ? v : -1.0);
    return addRaw(key, buf);
}

JsonOut& JsonOut::add(const std::string& key, long v)
{
    return addRaw(key, std::to_string(v));
}

JsonOut& JsonOut::add(const std::string& key, const std::string& v)
{
    std::string q = "\"";
    for (char c : v)
        q += (c == '"' || c == '\\') ? std::string("\\") + c : std::string(1, c);
    return addRaw(key, q + "\"");
}

JsonOut& JsonOut::addRaw(const std::string& key, const std::string& json)
{
    sep();
    body_ += "\"" + key + "\":" + json;
    return *this;
}

JsonOut& JsonOut::addPercentiles(const std::string& key, const Percentiles& p, double scale)
{
    JsonOut o;
    o.add("n", static_cast<long>(p.count)).add("p50", p.p50 * scale).add("p99", p.p99 * scale).add("max", p.max * scale);
    return addRaw(key, o.str());
}

} // namespace bench
