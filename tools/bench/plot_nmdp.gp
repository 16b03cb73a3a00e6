# plot_nmdp.gp — the figures of docs/benchmarks.md, "Maximal-dissipation contacts (mdp, nmdp)",
# from the data tools/bench/bench_nmdp.c writes (figs. 3-6 of Pan and Hauser 2020).
#   gnuplot -e "datadir='build/bench_nmdp'; imgdir='docs/images'" tools/bench/plot_nmdp.gp
# make bench-nmdp runs it when gnuplot is installed.
if (!exists("datadir")) datadir = 'build/bench_nmdp'
if (!exists("imgdir")) imgdir = 'docs/images'

set terminal pngcairo size 1500,1850 font ",11"
set grid
set key outside right top vertical box opaque font ",10"
dts = "5 7 10 20 30 50"
array col[6] = ["#d62728", "#ff7f0e", "#2ca02c", "#17becf", "#1f77b4", "#000000"]
steppers = "mdp nmdp expo implicit_euler"
titles = "\"mdp, feedback = semi\\_implicit (the default; polytope contacts)\" \"nmdp (NE-NMDP, polytope contacts)\" \"expo (spring-damper contacts)\" \"implicit\\_euler (spring-damper contacts)\""
# mdp with feedback = explicit, the paper's NE-MDP: the smaller steps bench_nmdp adds for it, then the set
fine = "0.1 0.2 0.25 0.3125 0.4 0.5 1 2 5 7 10 20 30 50"
array colfine[14] = ["#1f77b4", "#2ca02c", "#17becf", "#9467bd", "#ff7f0e", "#d62728", "#8c564b", "#e377c2", \
                     "#7f7f7f", "#bcbd22", "#aec7e8", "#98df8a", "#ffbb78", "#000000"]
# a run's file, when it exists (the quick run writes only two step sizes)
file(s, scen, dt) = sprintf("%s/%s_%s_%s.dat", datadir, s, scen, dt)
exists_file(f) = system("test -f '".f."' && echo 1 || echo 0") + 0

# columns: 1 t, 2 x, 3 y, 4 z, 5 tilt, 6 distance, 7 wall ms, 8 outer iterations, 9 alpha
do for [fig in "tilt height distance"] {
    scen = (fig eq "distance") ? "walk" : "jump"
    column = (fig eq "tilt") ? 5 : (fig eq "height") ? 4 : 6
    ylab = (fig eq "tilt") ? "torso tilt (deg)" : (fig eq "height") ? "torso height z (m)" : "distance walked along x (m)"
    set output imgdir.'/nmdp_'.fig.'.png'
    set multiplot layout 4,2 title sprintf("Robosimian %s: %s over time, step (= controller period) in {5, 7, 10, 20, 30, 50} ms (explicit mdp: from 0.1 ms)", scen, ylab)
    set xlabel "time (s)"
    set ylabel ylab
    if (fig eq "tilt") { set yrange [0:30] } else { set autoscale y }
    do for [k=1:4] {
        s = word(steppers, k)
        set title word(titles, k)
        plot for [i=1:6] (exists_file(file(s, scen, word(dts, i))) ? file(s, scen, word(dts, i)) : '/dev/null') \
             using 1:column with lines lw 1.5 lc rgb col[i] title word(dts, i)." ms"
    }
    set title "mdp, feedback = explicit (the paper's NE-MDP); a short line: diverged"
    plot for [i=1:14] (exists_file(file("mdp_explicit", scen, word(fine, i))) ? file("mdp_explicit", scen, word(fine, i)) : '/dev/null') \
         using 1:column with lines lw 1.5 lc rgb colfine[i] title word(fine, i)." ms"
    do for [v in "nmdp_order0 pbd_nmdp pbd_zonmdp"] {
        set title (v eq "nmdp_order0") ? "nmdp, order = 0 (NE-ZONMDP, polytope contacts)" : \
                  (v eq "pbd_nmdp") ? "nmdp, dynamics = pbd (PBD-NMDP, eq. 12)" : "nmdp, dynamics = pbd, order = 0 (PBD-ZONMDP)"
        plot for [i=1:6] (exists_file(file(v, scen, word(dts, i))) ? file(v, scen, word(dts, i)) : '/dev/null') \
             using 1:column with lines lw 1.5 lc rgb col[i] title word(dts, i)." ms"
    }
    unset multiplot
}

# fig. 6: first against zeroth order at 50 ms
set terminal pngcairo size 1500,1000 font ",11"
set output imgdir.'/nmdp_fig6.png'
set multiplot layout 2,2 title "nmdp at 50 ms: first order (eqs. 8-9) against zeroth order (eqs. 10-11)"
set autoscale y
set yrange [0:*]
set xlabel "time (s)"
do for [k=1:3] {
    column = (k == 1) ? 7 : (k == 2) ? 8 : 9
    set ylabel (k == 1) ? "wall time per step (ms)" : (k == 2) ? "outer PGM iterations per step" : "smallest step fraction alpha (Algorithm 2)"
    set title (k == 1) ? "time per step" : (k == 2) ? "outer iterations" : "alpha"
    plot for [scen in "jump walk"] for [o in "1 0"] sprintf("%s/fig6_%s_order%s.dat", datadir, scen, o) every ::1 \
         using 1:column with steps lw 1.2 title scen." order ".o
}
set title "histogram of frame rates (1 / wall time per step)"
set xlabel "frames per second"
set ylabel "steps"
set logscale x
binw(x) = 10**(floor(log10(x) * 20) / 20.0)
plot for [scen in "jump walk"] for [o in "1 0"] sprintf("%s/fig6_%s_order%s.dat", datadir, scen, o) every ::1 \
     using (binw(1000 / $7)):(1) smooth frequency with steps lw 1.2 title scen." order ".o
unset logscale x
unset multiplot
