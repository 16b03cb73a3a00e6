# plot_expo.gp — the figures of docs/benchmarks.md, "Exponential integrator (expo)", from the data
# tools/bench/bench_expo.c writes (figs. 2-6 of Hammoud et al. 2022; part g: cost against active contacts).
#   gnuplot -e "datadir='build/bench_expo'; imgdir='docs/images'" tools/bench/plot_expo.gp
# make bench-expo runs it when gnuplot is installed.
if (!exists("datadir")) datadir = 'build/bench_expo'
if (!exists("imgdir")) imgdir = 'docs/images'
if (!exists("parts")) parts = 'abcdgij'

set terminal pngcairo size 1500,1000 font ",11"
set grid
set logscale xy
set format y "10^{%L}"
set datafile missing "nan"   # what printf writes for NAN: a measurement that diverged or was not run
# five panels in a 2x3 grid (the squat under TSID, the paper's controller, and under joint PD; jump,
# trot, walk), the legend in the sixth cell, wide enough for the longest label
set key at screen 0.69, 0.27 left center vertical Left reverse box opaque font ",10" samplen 2 spacing 1.2

# one colour and point type per stepper, in the VARS order of part a (expo/a_accuracy.c): euler, rk4,
# implicit euler, expo mmm 0 to 4 (blues to greens), full, then the full exponential linearised at the
# step's start with our touch-down splitting, and the paper's scheme, at the start without splitting
array col[11] = ["#d62728", "#ff7f0e", "#9467bd", "#1f77b4", "#6baed6", "#17becf", "#74c476", "#2ca02c", "#000000", "#8c564b", "#e377c2"]
array pts[11] = [7, 5, 9, 11, 10, 13, 12, 15, 4, 6, 8]
scen = "solo_squat_tsid solo_squat solo_jump solo_trot romeo_walk"
titles = "\"solo-squat, TSID: the paper's controller (40 ms)\" \"solo-squat, joint PD (controller 40 ms)\" \"solo-jump (controller 10 ms)\" \"solo-trot (controller 2 ms)\" \"romeo-walk (controller 40 ms)\""

if (strstrt(parts, 'a') > 0) {
    # ---- fig. 2: local error against real-time factor
    set terminal pngcairo size 1900,1000 font ",11"
    set output imgdir.'/expo_error_vs_rtf.png'
    set multiplot layout 2,3 title "Local integration error (mean over controller periods of ||x ⊖ x_{gt}||_∞) vs real-time factor (stepper time only)" margins 0.05, 0.98, 0.07, 0.93 spacing 0.06, 0.1
    set xlabel "real-time factor"
    set ylabel "mean local error"
    set yrange [*:1e3]
    set format x "10^{%L}"
    do for [s=1:5] {
        set title word(titles, s)
        if (s == 1) { set key } else { unset key }
        plot for [i=0:10] datadir.'/accuracy_'.word(scen, s).'.dat' index i u 2:3 w lp lw 2 pt pts[i+1] ps 1.1 lc rgb col[i+1] t columnheader(1)
    }
    unset multiplot

    # ---- fig. 3: local error against the integration step
    set output imgdir.'/expo_error_vs_dt.png'
    set multiplot layout 2,3 title "Local integration error vs integration step" margins 0.05, 0.98, 0.07, 0.93 spacing 0.06, 0.1
    set xlabel "step δt (ms)"
    set format x "%g"
    do for [s=1:5] {
        set title word(titles, s)
        if (s == 1) { set key } else { unset key }
        plot for [i=0:10] datadir.'/accuracy_'.word(scen, s).'.dat' index i u 1:3 w lp lw 2 pt pts[i+1] ps 1.1 lc rgb col[i+1] t columnheader(1)
    }
    unset multiplot
}

if (strstrt(parts, 'd') > 0) {
    # ---- fig. 4: local error against contact stiffness and damping ratio (solo_trot)
    # in the ST order of part d (expo/d_stiffness.c), in part a's colours: euler, expo mmm 0, 1, 3,
    # implicit euler, expo full; the paper's scheme (mmm 0 at the step's start, no splitting) last
    array c3[7] = ["#d62728", "#1f77b4", "#6baed6", "#74c476", "#9467bd", "#000000", "#e377c2"]
    array p3[7] = [7, 11, 10, 12, 9, 4, 8]
    set terminal pngcairo size 1100,500 font ",11"
    set output imgdir.'/expo_stiffness_damping.png'
    set autoscale y
    set key default
    set key inside top left box opaque font ",10" samplen 2
    set multiplot layout 1,2 title "solo-trot: local integration error vs contact stiffness and damping ratio B / (2 √K)"
    set title "stiffness (damping ratio 0.5)"
    set xlabel "contact stiffness K (N/m)"
    set ylabel "mean local error"
    set format x "10^{%L}"
    plot for [i=0:6] datadir.'/stiffness.dat' index i u 1:2 w lp lw 2 pt p3[i+1] lc rgb c3[i+1] t columnheader(1)
    set title "damping ratio (K = 10^5 N/m)"
    set xlabel "damping ratio"
    unset logscale x
    set format x "%g"
    plot for [i=0:6] datadir.'/damping.dat' index i u 1:2 w lp lw 2 pt p3[i+1] lc rgb c3[i+1] t columnheader(1)
    unset multiplot
}

if (strstrt(parts, 'g') > 0) {
    # ---- beyond the paper: expo's cost per step against the number of active contacts (Romeo standing)
    set terminal pngcairo size 900,560 font ",11"
    set output imgdir.'/expo_cost_vs_contacts.png'
    set autoscale
    unset multiplot
    set key default
    set key inside top left box opaque font ",10" samplen 2
    set title "expo's cost per step against active contacts (Romeo standing under PD, 2 ms steps)"
    set xlabel "contact points n (active: the table in docs/benchmarks.md)"
    set ylabel "µs per step (stepper only, median of runs)"
    unset logscale x
    set logscale y
    set format x "%g"
    set format y "%g"
    set xrange [0.5:16.5]
    set yrange [5:*]
    set xtics 1
    plot datadir.'/contacts.dat' u 1:2 w lp lw 2 pt 7 lc rgb "#000000" t "closed form (B = βK, as shipped)", \
         ''                     u 1:3 w lp lw 2 pt 4 lc rgb "#2ca02c" t "Padé, full exponential", \
         ''                     u 1:4 w lp lw 2 pt 11 lc rgb "#1f77b4" t "Padé, max\\_mat\\_mult 0"
}

if (strstrt(parts, 'i') > 0) {
    # ---- fig. 5: the normal force of one foot predicted by the frozen linear system (11) against a fine simulation
    array c5[4] = ["#000000", "#1f77b4", "#2ca02c", "#d62728"]
    set terminal pngcairo size 1500,520 font ",11"
    set output imgdir.'/expo_fig5_force_prediction.png'
    unset multiplot
    set autoscale
    set key default
    set key top right box opaque font ",10" samplen 2
    set multiplot layout 1,3 title "solo-squat's initial posture with an initial base velocity v_z: normal force of the FL foot, simulated (explicit Euler at 1/4096 ms, solid) and predicted by eq. (11) with A, b frozen at t = 0 (dashed)"
    unset logscale x
    set logscale y
    set format x "%g"
    set format y "%g"
    set xlabel "t (ms)"
    set ylabel "normal force (N)"
    set title "the paper's 20 ms horizon"
    set xrange [0:20]
    set yrange [3:200]
    plot for [i=0:3] datadir.'/force_prediction.dat' index i u 1:2 w l lw 2 lc rgb c5[i+1] t columnheader(1), \
         for [i=0:3] datadir.'/force_prediction.dat' index i u 1:3 w l lw 2 dt 2 lc rgb c5[i+1] notitle
    set title "the first millisecond: the jump b v_n and its decay"
    unset logscale y
    set xrange [0:1]
    set yrange [0:*]
    plot for [i=0:3] datadir.'/force_prediction.dat' index i u 1:2 w l lw 2 lc rgb c5[i+1] t columnheader(1), \
         for [i=0:3] datadir.'/force_prediction.dat' index i u 1:3 w l lw 2 dt 2 lc rgb c5[i+1] notitle
    set title "prediction error over 40 ms (the scenario's step)"
    set key top left
    set xrange [0:40]
    set yrange [*:*]
    set ylabel "predicted - simulated (N)"
    plot for [i=0:3] datadir.'/force_prediction.dat' index i u 1:($3-$2) w l lw 2 lc rgb c5[i+1] t columnheader(1)
    unset multiplot
    unset xrange
    unset yrange
}

if (strstrt(parts, 'j') > 0) {
    # ---- fig. 6: the normal force of one contact point, trotting and walking (as shipped, and at ≈ 1/64 ms)
    set terminal pngcairo size 1500,560 font ",11"
    set output imgdir.'/expo_fig6_normal_force.png'
    unset multiplot
    set autoscale
    unset logscale
    set key default
    set key top right box opaque font ",10" samplen 2
    set format x "%g"
    set format y "%g"
    set offsets 0, 0, graph 0.2, 0   # room above the curves for the key
    set multiplot layout 1,2 title "Normal force of one contact point: the jump at each touch-down is b |v_n| (the spring starts at zero)"
    set xlabel "t (s)"
    set ylabel "normal force (N)"
    set title "solo-trot, FL foot (expo at 2 ms, as shipped)"
    set xrange [0.3:1.8]
    set yrange [0:*]
    plot datadir.'/normal_force_solo_trot.dat' index 1 u 1:2 w l lw 1.5 lc rgb "#1f77b4" t columnheader(1), \
         ''                                    index 0 u 1:2 w p pt 7 ps 0.5 lc rgb "#000000" t columnheader(1), \
         ''                                    index 2 u 1:2 w p pt 6 ps 1.8 lw 2 lc rgb "#d62728" t columnheader(1)
    set title "romeo-walk, front-left corner of the left sole (expo at 5 ms, as shipped)"
    set xrange [0:5]
    plot datadir.'/normal_force_romeo_walk.dat' index 1 u 1:2 w l lw 1.5 lc rgb "#1f77b4" t columnheader(1), \
         ''                                     index 0 u 1:2 w p pt 7 ps 0.5 lc rgb "#000000" t columnheader(1), \
         ''                                     index 2 u 1:2 w p pt 6 ps 1.8 lw 2 lc rgb "#d62728" t columnheader(1)
    unset multiplot
    unset offsets
    unset xrange
    unset yrange
}
