#pragma once
// A small CSV reader/writer for measurement tables: header row, comma-separated, double quotes for fields
// holding commas. Enough for the data we fit on and for `prenet kernels --csv`.
#include <istream>
#include <ostream>
#include <string>
#include <vector>

namespace prenet {

struct CsvTable {
    std::vector<std::string> header;
    std::vector<std::vector<std::string>> rows;
    int column(const std::string& name) const;  // -1 if absent
};

CsvTable read_csv(std::istream& in, const std::string& origin);  // throws Error on ragged rows
CsvTable read_csv_file(const std::string& path);
std::vector<std::string> split_csv_line(const std::string& line);
std::string csv_field(const std::string& value);  // quotes when needed

}  // namespace prenet
