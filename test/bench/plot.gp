# One PNG, one panel per algorithm: throughput against size, one line per configuration.
# Usage: gnuplot -e "dir='OUT_DIR'" test/bench/plot.gp   (reads OUT_DIR/throughput.tsv)
set terminal pngcairo size 1400,1000 font ",11"
set output dir.'/throughput.png'
set datafile separator "\t"
set datafile missing "NaN"
set logscale xy
set xtics ("16" 16, "64" 64, "256" 256, "1K" 1024, "8K" 8192, "16K" 16384)
set xrange [12:22000]
set xlabel "bytes per operation"
set ylabel "MB/s"
set grid
set key bottom right
array names[6] = ["(a) default provider", "(b) ccree forced", "(c) ccree default config", \
                  "(d) afalg engine", "(e) libkcapi loop", "(f) ccree, simulated CryptoCell"]
array colors[6] = ["black", "#0072b2", "#009e73", "#d55e00", "#cc79a7", "#e69f00"]
# The configurations measured for ALG: columns 3 to 8 of its rows that hold a number.
measured(alg) = system(sprintf("awk -F'\t' '$1 == \"%s\" { for (i = 3; i <= 8; i++) \
    if ($i != \"NaN\") m[i - 2] = 1 } END { for (i = 1; i <= 6; i++) if (m[i]) print i }' \
    '%s/throughput.tsv'", alg, dir))
set multiplot layout 2,2 title "ccree benchmark (test/bench/run.sh)"
do for [alg in "AES-128-CBC AES-128-CTR AES-128-GCM SHA-256"] {
    set title alg
    plot for [c in measured(alg)] sprintf("< awk -F'\t' '$1 == \"%s\"' '%s/throughput.tsv'", \
         alg, dir) using 2:(column(int(c) + 2)) with linespoints lc rgb colors[int(c)] lw 2 pt 7 \
         title names[int(c)]
}
unset multiplot
