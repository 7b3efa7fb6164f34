#include "core/csv.hpp"

#include <fstream>

#include "core/error.hpp"

namespace prenet {

int CsvTable::column(const std::string& name) const {
    for (size_t i = 0; i < header.size(); ++i)
        if (header[i] == name) return static_cast<int>(i);
    return -1;
}

std::vector<std::string> split_csv_line(const std::string& line) {
    std::vector<std::string> out;
    std::string field;
    bool quoted = false;
    for (size_t i = 0; i < line.size(); ++i) {
        char c = line[i];
        if (quoted) {
            if (c == '"' && i + 1 < line.size() && line[i + 1] == '"') field += '"', ++i;
            else if (c == '"') quoted = false;
            else field += c;
        } else if (c == '"') {
            quoted = true;
        } else if (c == ',') {
            out.push_back(field);
            field.clear();
        } else if (c != '\r') {
            field += c;
        }
    }
    out.push_back(field);
    return out;
}

CsvTable read_csv(std::istream& in, const std::string& origin) {
    CsvTable t;
    std::string line;
    size_t line_no = 0;
    while (std::getline(in, line)) {
        ++line_no;
        if (line.empty() || line == "\r") continue;
        auto fields = split_csv_line(line);
        if (t.header.empty()) {
            t.header = fields;
            continue;
        }
        if (fields.size() != t.header.size())
            throw Error(origin + ": line " + std::to_string(line_no) + " has " + std::to_string(fields.size()) +
                        " fields, the header has " + std::to_string(t.header.size()));
        t.rows.push_back(std::move(fields));
    }
    if (t.header.empty()) throw Error(origin + ": empty CSV (no header row)");
    return t;
}

CsvTable read_csv_file(const std::string& path) {
    std::ifstream in(path);
    if (!in) throw Error("cannot read '" + path + "'");
    return read_csv(in, path);
}

std::string csv_field(const std::string& v) {
    if (v.find_first_of(",\"\n") == std::string::npos) return v;
    std::string q = "\"";
    for (char c : v) q += c == '"' ? std::string("\"\"") : std::string(1, c);
    return q + "\"";
}

}  // namespace prenet
