#include "doctor/doctor_report.h"

#include <cmath>
#include <sstream>

namespace netsmith::doctor {

namespace {

Json number(double v) {
  return std::isfinite(v) ? Json(v) : Json();
}

Json refJson(const SampleRef& r) {
  return Json{{"split", r.split}, {"index", r.index}, {"item", r.item}, {"label", r.label}};
}

std::string escapeHtml(const std::string& s) {
  std::string out;
  for (const char c : s) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

std::string fixed(double v, int digits) {
  if (!std::isfinite(v)) return "-";
  std::ostringstream os;
  os.setf(std::ios::fixed);
  os.precision(digits);
  os << v;
  return os.str();
}

}  // namespace

Json DoctorReport::toJson() const {
  Json issues = Json::array();
  for (const auto& i : labelIssues)
    issues.push_back(Json{{"sample", refJson(i.sample)},
                          {"suggested", i.suggested},
                          {"self_confidence", number(i.selfConfidence)},
                          {"suggested_probability", number(i.suggestedProbability)}});
  Json dups = Json::array();
  for (const auto& d : duplicates)
    dups.push_back(Json{{"a", refJson(d.a)},
                        {"b", refJson(d.b)},
                        {"kind", d.exact ? "exact" : "near"},
                        {"leak", d.leak()},
                        {"hash_distance", d.distance},
                        {"similarity", number(d.similarity)}});
  Json unreadableList = Json::array();
  for (const auto& u : unreadableSamples)
    unreadableList.push_back(Json{{"sample", refJson(u.sample)}, {"why", u.why}});
  Json outs = Json::array();
  for (const auto& o : outliers)
    outs.push_back(Json{{"sample", refJson(o.sample)},
                        {"kind", o.kind},
                        {"why", o.why},
                        {"score", number(o.score)}});
  return Json{{"project", project},
              {"classes", classes},
              {"examined", examined},
              {"validation_samples", validationSamples},
              {"test_samples", testSamples},
              {"unreadable", unreadable},
              {"unreadable_samples", unreadableList},
              {"probabilities_from", probabilitiesFrom},
              {"in_sample", inSample},
              {"warnings", warnings},
              {"label_issues", Json{{"flagged", labelIssuesFlagged}, {"samples", issues}}},
              {"duplicates", Json{{"exact", exactDuplicates},
                                  {"near", nearDuplicates},
                                  {"leaks", leaks},
                                  {"pairs", dups}}},
              {"outliers", Json{{"found", outliersFound}, {"samples", outs}}},
              {"balance", Json{{"counts", balance.counts},
                               {"imbalance_ratio", number(balance.imbalanceRatio)},
                               {"effective_classes", number(balance.effectiveClasses)},
                               {"advice", balance.advice}}},
              {"seconds", seconds},
              {"stopped", stopped}};
}

// arch: table of data (one entry per field of the report).
Json doctorReportSchema() {
  const Json ref = Json{{"type", "object"},
                        {"required", {"split", "index", "item", "label"}},
                        {"properties",
                         {{"split", {{"enum", {"train", "validation", "test"}}}},
                          {"index", {{"type", "integer"}, {"minimum", 0}}},
                          {"item", {{"type", "string"}}},
                          {"label", {{"type", "integer"}}}}}};
  const Json count = Json{{"type", "integer"}, {"minimum", 0}};
  const Json maybeNumber = Json{{"type", {"number", "null"}}};
  return Json{{"$schema", "https://json-schema.org/draft/2020-12/schema"},
              {"title", "netsmith-cli doctor report"},
              {"type", "object"},
              {"required",
               {"project", "classes", "examined", "label_issues", "duplicates", "outliers",
                "balance", "seconds", "stopped"}},
              {"properties",
               {{"project", {{"type", "string"}}},
                {"classes", {{"type", "array"}, {"items", {{"type", "string"}}}}},
                {"examined", count},
                {"validation_samples", count},
                {"test_samples", count},
                {"unreadable", count},
                {"unreadable_samples",
                 {{"type", "array"},
                  {"items",
                   {{"type", "object"},
                    {"required", {"sample", "why"}},
                    {"properties", {{"sample", ref}, {"why", {{"type", "string"}}}}}}}}},
                {"probabilities_from", {{"type", "string"}}},
                {"in_sample", {{"type", "boolean"}}},
                {"warnings", {{"type", "array"}, {"items", {{"type", "string"}}}}},
                {"label_issues",
                 {{"type", "object"},
                  {"required", {"flagged", "samples"}},
                  {"properties",
                   {{"flagged", count},
                    {"samples",
                     {{"type", "array"},
                      {"maxItems", kReportLabelIssues},
                      {"items",
                       {{"type", "object"},
                        {"required", {"sample", "suggested", "self_confidence"}},
                        {"properties",
                         {{"sample", ref},
                          {"suggested", {{"type", "integer"}}},
                          {"self_confidence", maybeNumber},
                          {"suggested_probability", maybeNumber}}}}}}}}}}},
                {"duplicates",
                 {{"type", "object"},
                  {"required", {"exact", "near", "leaks", "pairs"}},
                  {"properties",
                   {{"exact", count},
                    {"near", count},
                    {"leaks", count},
                    {"pairs",
                     {{"type", "array"},
                      {"maxItems", kReportDuplicates},
                      {"items",
                       {{"type", "object"},
                        {"required", {"a", "b", "kind", "leak", "similarity"}},
                        {"properties",
                         {{"a", ref},
                          {"b", ref},
                          {"kind", {{"enum", {"exact", "near"}}}},
                          {"leak", {{"type", "boolean"}}},
                          {"hash_distance", count},
                          {"similarity", maybeNumber}}}}}}}}}}},
                {"outliers",
                 {{"type", "object"},
                  {"required", {"found", "samples"}},
                  {"properties",
                   {{"found", count},
                    {"samples",
                     {{"type", "array"},
                      {"maxItems", kReportOutliers},
                      {"items",
                       {{"type", "object"},
                        {"required", {"sample", "kind", "why", "score"}},
                        {"properties",
                         {{"sample", ref},
                          {"kind", {{"enum", {"features", "size", "channels", "brightness"}}}},
                          {"why", {{"type", "string"}}},
                          {"score", maybeNumber}}}}}}}}}}},
                {"balance",
                 {{"type", "object"},
                  {"required", {"counts", "imbalance_ratio", "effective_classes", "advice"}},
                  {"properties",
                   {{"counts", {{"type", "array"}, {"items", count}}},
                    {"imbalance_ratio", maybeNumber},
                    {"effective_classes", maybeNumber},
                    {"advice", {{"type", "string"}}}}}}},
                {"seconds", {{"type", "number"}}},
                {"stopped", {{"type", "boolean"}}}}}};
}

namespace {

/// What gives a sample's thumbnail ("data:image/png;base64,..." or "" for none).
using HtmlPicture = std::function<std::string(const SampleRef&)>;

/// Class `c`'s name, or its number when the report has no name for it.
std::string htmlClassName(const DoctorReport& r, std::int64_t c) {
  return c >= 0 && std::size_t(c) < r.classes.size() ? r.classes[std::size_t(c)]
                                                     : std::to_string(c);
}

/// A sample's thumbnail, or a "?" when `picture` gives none.
std::string htmlSampleImage(const HtmlPicture& picture, const SampleRef& s) {
  const std::string uri = picture ? picture(s) : std::string();
  return uri.empty() ? std::string("<span class=none>?</span>")
                     : "<img src=\"" + escapeHtml(uri) + "\" alt=\"\">";
}

/// A sample's split and index, with its item below.
std::string htmlSampleName(const SampleRef& s) {
  return escapeHtml(s.split) + " #" + std::to_string(s.index) + "<br><small>" + escapeHtml(s.item) +
         "</small>";
}

/// The page's head, what was examined, the warnings and the samples that could not be read.
void writeHtmlIntro(std::ostream& h, const DoctorReport& r) {
  h << "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\">"
       "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; img-src "
       "data:; style-src 'unsafe-inline'\">"
    << "<title>Data doctor: " << escapeHtml(r.project) << "</title><style>"
    << "body{font-family:sans-serif;margin:2em;color:#222}table{border-collapse:collapse}"
       "td,th{border:1px solid #ccc;padding:4px 8px;vertical-align:middle;text-align:left}"
       "img{image-rendering:pixelated;width:64px}small{color:#666}.warn{color:#a50}"
       ".leak{background:#fee}</style></head><body>\n";
  h << "<h1>Data doctor: " << escapeHtml(r.project) << "</h1>\n<p>" << r.examined
    << " training samples examined";
  if (r.validationSamples) h << ", " << r.validationSamples << " validation";
  if (r.testSamples) h << ", " << r.testSamples << " test";
  if (r.unreadable) h << "; " << r.unreadable << " could not be read";
  h << ". " << fixed(r.seconds, 0) << " s" << (r.stopped ? " (stopped before the end)" : "")
    << ".</p>\n";
  for (const auto& w : r.warnings)
    h << "<p class=warn>" << escapeHtml(w) << "</p>\n";
  if (!r.unreadableSamples.empty()) {
    h << "<h2>Unreadable samples</h2>\n<p>Left out of every check.</p>\n<table><tr><th>sample</th>"
         "<th>why</th></tr>\n";
    for (const auto& u : r.unreadableSamples)
      h << "<tr><td>" << htmlSampleName(u.sample) << "</td><td>" << escapeHtml(u.why)
        << "</td></tr>\n";
    h << "</table>\n";
  }
}

/// The duplicates and leakage section: the counts and the first kHtmlRows pairs.
void writeHtmlDuplicates(std::ostream& h, const DoctorReport& r, const HtmlPicture& picture) {
  h << "<h2>Duplicates and leakage</h2>\n<p>" << r.leaks << (r.leaks == 1 ? " pair" : " pairs")
    << " across splits (leakage), " << r.exactDuplicates << " exact and " << r.nearDuplicates
    << " near duplicates in all.</p>\n";
  if (!r.duplicates.empty()) {
    h << "<table><tr><th></th><th>sample</th><th></th><th>sample</th><th>kind</th>"
         "<th>similarity</th></tr>\n";
    for (std::size_t i = 0; i < r.duplicates.size() && i < kHtmlRows; ++i) {
      const auto& d = r.duplicates[i];
      h << "<tr" << (d.leak() ? " class=leak" : "") << "><td>" << htmlSampleImage(picture, d.a)
        << "</td><td>" << htmlSampleName(d.a) << "</td><td>" << htmlSampleImage(picture, d.b)
        << "</td><td>" << htmlSampleName(d.b) << "</td><td>" << (d.exact ? "exact" : "near")
        << (d.leak() ? ", across splits" : "") << "</td><td>" << fixed(d.similarity, 3)
        << "</td></tr>\n";
    }
    h << "</table>\n";
  }
}

/// The likely label errors section: where the probabilities came from and the first kHtmlRows
/// flagged samples.
void writeHtmlLabelIssues(std::ostream& h, const DoctorReport& r, const HtmlPicture& picture) {
  h << "<h2>Likely label errors</h2>\n<p>";
  if (r.probabilitiesFrom.empty())
    h << "Labels were not checked.";
  else
    h << r.labelIssuesFlagged << " samples flagged by confident learning, from "
      << escapeHtml(r.probabilitiesFrom) << "; every sample's rank is in label_ranking.csv.";
  h << "</p>\n";
  if (!r.labelIssues.empty()) {
    h << "<table><tr><th></th><th>sample</th><th>given</th><th>suggested</th>"
         "<th>p(given)</th><th>p(suggested)</th></tr>\n";
    for (std::size_t i = 0; i < r.labelIssues.size() && i < kHtmlRows; ++i) {
      const auto& l = r.labelIssues[i];
      h << "<tr><td>" << htmlSampleImage(picture, l.sample) << "</td><td>"
        << htmlSampleName(l.sample) << "</td><td>" << escapeHtml(htmlClassName(r, l.sample.label))
        << "</td><td>" << escapeHtml(htmlClassName(r, l.suggested)) << "</td><td>"
        << fixed(l.selfConfidence, 3) << "</td><td>" << fixed(l.suggestedProbability, 3)
        << "</td></tr>\n";
    }
    h << "</table>\n";
  }
}

/// The balance section: each class's training samples and the imbalance figures.
void writeHtmlBalance(std::ostream& h, const DoctorReport& r) {
  h << "<h2>Balance</h2>\n<table><tr><th>class</th><th>training samples</th></tr>\n";
  for (std::size_t c = 0; c < r.balance.counts.size(); ++c)
    h << "<tr><td>" << escapeHtml(htmlClassName(r, std::int64_t(c))) << "</td><td>"
      << r.balance.counts[c] << "</td></tr>\n";
  h << "</table>\n<p>Largest class / smallest: " << fixed(r.balance.imbalanceRatio, 2)
    << "; effective number of classes " << fixed(r.balance.effectiveClasses, 2) << " of "
    << r.balance.counts.size() << ".";
  if (!r.balance.advice.empty()) h << " " << escapeHtml(r.balance.advice) << ".";
  h << "</p>\n";
}

/// The outliers section: the count and the first kHtmlRows outliers.
void writeHtmlOutliers(std::ostream& h, const DoctorReport& r, const HtmlPicture& picture) {
  h << "<h2>Outliers</h2>\n<p>" << r.outliersFound << " found.</p>\n";
  if (!r.outliers.empty()) {
    h << "<table><tr><th></th><th>sample</th><th>label</th><th>why</th></tr>\n";
    for (std::size_t i = 0; i < r.outliers.size() && i < kHtmlRows; ++i) {
      const auto& o = r.outliers[i];
      h << "<tr><td>" << htmlSampleImage(picture, o.sample) << "</td><td>"
        << htmlSampleName(o.sample) << "</td><td>" << escapeHtml(htmlClassName(r, o.sample.label))
        << "</td><td>" << escapeHtml(o.why) << "</td></tr>\n";
    }
    h << "</table>\n";
  }
}

}  // namespace

std::string reportHtml(const DoctorReport& r,
                       const std::function<std::string(const SampleRef&)>& picture) {
  std::ostringstream h;
  writeHtmlIntro(h, r);
  writeHtmlDuplicates(h, r, picture);
  writeHtmlLabelIssues(h, r, picture);
  writeHtmlBalance(h, r);
  writeHtmlOutliers(h, r, picture);
  h << "</body></html>\n";
  return h.str();
}

}  // namespace netsmith::doctor
