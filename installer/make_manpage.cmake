# Writes netsmith-cli.1 (roff) from `netsmith-cli --help` and `--version`:
#   cmake -DCLI=path/to/netsmith-cli -DOUT=netsmith-cli.1 -P make_manpage.cmake
execute_process(COMMAND ${CLI} --help OUTPUT_VARIABLE help RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "netsmith-cli --help failed (${rc})")
endif()
execute_process(COMMAND ${CLI} --version OUTPUT_VARIABLE version OUTPUT_STRIP_TRAILING_WHITESPACE)
string(REGEX REPLACE "^netsmith-cli " "" version "${version}")
# roff: a leading dot or quote would be a request; backslashes are escapes.
string(REPLACE "\\" "\\e" help "${help}")
string(REGEX REPLACE "\n([.'])" "\n\\\\&\\1" help "${help}")
file(WRITE ${OUT} ".TH NETSMITH-CLI 1 \"\" \"Netsmith ${version}\" \"User Commands\"
.SH NAME
netsmith-cli \\- train, evaluate and export convolutional networks from Netsmith project files
.SH SYNOPSIS
.B netsmith-cli
\\fICOMMAND\\fR [\\fIARGUMENTS\\fR]
.SH DESCRIPTION
The headless twin of the Netsmith studio: it runs the same project files
(\\fI*.netsmith.json\\fR). Templates and examples are in
\\fI/usr/share/netsmith\\fR.
.SH COMMANDS AND OPTIONS
.nf
${help}.fi
.SH FILES
.TP
.I /usr/share/netsmith/examples/fashion_mnist.netsmith.json
the default project (Fashion-MNIST from the dataset-fashion-mnist package)
.TP
.I runs/<project>-<time>/
a training run: metrics.csv, events.jsonl, train.log, checkpoints/, exports/
.SH SEE ALSO
.BR netsmith (1)
")
