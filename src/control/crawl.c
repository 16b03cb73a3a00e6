/* crawl.c — a statically stable crawl for a quadruped: one leg at a time, in the lateral
 * sequence hind-right, front-right, hind-left, front-left, while the body moves forward at a
 * steady speed and sways sideways away from the side about to swing, so that the centre of
 * mass stays inside the triangle of the three feet on the ground.
 *
 * A cycle (period T) is: shift left, swing hind-right, swing front-right, shift right, swing
 * hind-left, swing front-left. In a shift the four feet stand while the body crosses to the
 * other side (a raised-cosine profile of duration shift_fraction T / 2); each swing takes
 * (1 − shift_fraction) T / 4. Sideways only: each support triangle's long side is a diagonal
 * through the feet's centre, and a sideways shift away from the swinging side puts the centre
 * of mass inside both triangles of that side's two swings, so the body crosses over only twice
 * per cycle, slowly; a forward or backward sway as well would make the forward motion
 * unsteady. The sway is `sway` times the swinging feet's lateral distance from the centre.
 *
 * A swing leaves and lands at rest in the world (a raised-cosine profile forward, lifted by
 * step_height) and lands ahead of its nominal place under the body by half the distance the
 * body covers while that foot stands, so that each foot's position under the body
 * oscillates about its nominal one. The speed ramps up over `ramp`, so the first strides are
 * short. A swing ends `sink` below the ground, so that the foot lands even when the body rides
 * a little high, and its stance target returns to the ground during the next half swing.
 *
 * Everything is a function of time in a world frame that starts at the base, turned into
 * foot positions in the base frame (the base taken level at its planned place), which the
 * gaits' IK turns into joint references (gait.c). */
#include <math.h>

#include "control_internal.h"

typedef struct crawl_options {
    mbs_pd_options pd;
    double settle, period, shift_fraction, velocity, step_height, sway, ramp, sink;
} crawl_options;

static const mbs_option_spec spec[] = {
    {"settle", MBS_OPT_REAL, "s", 0, 1e6, 0, "1", NULL, offsetof(crawl_options, settle),
     "time standing before the crawl"},
    {"period", MBS_OPT_REAL, "s", 0, 100, MBS_OPT_OPEN_LO, "5", NULL, offsetof(crawl_options, period),
     "gait cycle: every leg swings once, one after the other"},
    {"shift_fraction", MBS_OPT_REAL, "", 0, 1, MBS_OPT_OPEN_LO | MBS_OPT_OPEN_HI, "0.4", NULL,
     offsetof(crawl_options, shift_fraction),
     "share of the cycle spent shifting the body sideways on four feet (twice per cycle); the rest is the four swings"},
    {"velocity", MBS_OPT_REAL, "m/s", -1, 1, 0, "0.06", NULL, offsetof(crawl_options, velocity), "forward base velocity"},
    {"step_height", MBS_OPT_REAL, "m", 0, 0.3, 0, "0.08", NULL, offsetof(crawl_options, step_height), "swing foot lift"},
    {"sway", MBS_OPT_REAL, "", 0, 0.5, 0, "0.25", NULL, offsetof(crawl_options, sway),
     "sideways body shift away from the swinging side, as a fraction of its feet's lateral distance from the feet's centre"},
    {"ramp", MBS_OPT_REAL, "s", 0, 1e3, 0, "2", NULL, offsetof(crawl_options, ramp),
     "time to reach the full velocity, so that the first strides are short"},
    {"sink", MBS_OPT_REAL, "m", 0, 0.05, 0, "0.005", NULL, offsetof(crawl_options, sink),
     "depth below the ground a swing ends at, so that the foot lands before its stance"},
};

/* The legs in swing order (hind-right, front-right, hind-left, front-left) from the nominal
 * feet: right is y < 0, front x > 0 in the base frame. */
static int swing_order(const mbs_gait *g, int order[4])
{
    int slot[4] = {-1, -1, -1, -1};
    for (int i = 0; i < 4; i++) {
        int front = g->nom[i][0] > 0, left = g->nom[i][1] > 0;
        int k = 2 * left + front;   /* 0 hind-right, 1 front-right, 2 hind-left, 3 front-left */
        if (slot[k] >= 0) return 0;
        slot[k] = i;
    }
    for (int k = 0; k < 4; k++) order[k] = slot[k];
    return 1;
}

/* The base's forward travel τ seconds into the crawl: the speed ramps up linearly. */
static double travel(const crawl_options *o, double tau)
{
    if (tau <= 0) return 0;
    if (o->ramp > 0 && tau < o->ramp) return o->velocity * tau * tau / (2 * o->ramp);
    return o->velocity * (tau - 0.5 * o->ramp);
}

/* The start of swing n (0..3 in swing order) within a cycle: each side's two swings follow
 * that side's shift. */
static double swing_start(const crawl_options *o, int n)
{
    double ts = 0.5 * o->shift_fraction * o->period, tw = 0.25 * (1 - o->shift_fraction) * o->period;
    return (n < 2 ? ts : 2 * ts) + n * tw;
}

/* The body's sideways sway (world y) τ seconds into the crawl: +a while the right legs swing,
 * −a while the left ones do, crossing over in the shifts. */
static double sway_at(const mbs_gait *g, const crawl_options *o, const int order[4], double tau)
{
    if (tau <= 0) return 0;
    double ts = 0.5 * o->shift_fraction * o->period, tw = 0.25 * (1 - o->shift_fraction) * o->period;
    double cy = 0;
    for (int i = 0; i < 4; i++) cy += g->nom[i][1] / 4;
    /* away from the right feet: towards +y by sway times their mean distance from the centre */
    double a = o->sway * (cy - 0.5 * (g->nom[order[0]][1] + g->nom[order[1]][1]));
    double k = floor(tau / o->period), c = tau - k * o->period;
    if (c < ts) return (k > 0 ? -a : 0) + ((k > 0 ? 2 : 1) * a) * mbsi_smooth_step(c / ts);
    if (c < ts + 2 * tw) return a;
    if (c < 2 * ts + 2 * tw) return a - 2 * a * mbsi_smooth_step((c - ts - 2 * tw) / ts);
    return -a;
}

static void feet(const mbs_gait *g, double t, const int *touching, double p[][3], int *stance, double *kp, double *kd)
{
    (void)touching;
    const crawl_options *o = g->opts;
    int order[4];
    swing_order(g, order);   /* checked at init */
    double tau = t - o->settle, tw = 0.25 * (1 - o->shift_fraction) * o->period;
    double body = travel(o, tau), sw = sway_at(g, o, order, tau);
    /* landing ahead of the nominal place by half the body's travel while the foot stands */
    double ahead = 0.5 * o->velocity * (o->period - tw);
    for (int n = 0; n < 4; n++) {
        int i = order[n];
        double x = g->nom[i][0], z = g->nom[i][2];
        stance[i] = 1;
        double start0 = swing_start(o, n);
        if (tau >= start0) {
            /* the last swing begun: j, over [ts, te] */
            double j = floor((tau - start0) / o->period), ts = start0 + j * o->period, te = ts + tw;
            double land = g->nom[i][0] + travel(o, te) + ahead;
            double from = j == 0 ? g->nom[i][0] : g->nom[i][0] + travel(o, te - o->period) + ahead;
            if (tau < te) {
                double u = (tau - ts) / tw;
                x = from + (land - from) * mbsi_smooth_step(u);
                z += o->step_height * 0.5 * (1 - cos(2 * MBS_PI * u)) - o->sink * mbsi_smooth_step(u);
                stance[i] = 0;
            } else {
                x = land;
                /* back up to the ground over half a swing after the landing */
                z -= o->sink * (1 - mbsi_smooth_step((tau - te) / (0.5 * tw)));
            }
        }
        /* world to base frame: the base at (body, sway), level */
        p[i][0] = x - body;
        p[i][1] = g->nom[i][1] - sw;
        p[i][2] = z;
        if (kp) kp[i] = o->pd.kp;
        if (kd) kd[i] = o->pd.kd;
    }
}

static int init(mbs_controller *c, mbs_error *err)
{
    const crawl_options *o = c->opts;
    if (c->sys->nfeet != 4)
        return mbsi_fail(err, MBS_ERR_ARG, "controller 'crawl' needs four feet as contact points, got %d", c->sys->nfeet);
    int rc = mbsi_gait_init(c, &o->pd, feet, err);
    if (rc != MBS_OK) return rc;
    int order[4];
    if (!swing_order(c->impl, order)) {
        mbsi_gait_fini(c);
        return mbsi_fail(err, MBS_ERR_ARG, "controller 'crawl': the four feet must be one in each quadrant of the base "
                        "(front/hind by x, left/right by y) in the initial posture");
    }
    return MBS_OK;
}

const mbs_controller_type mbsi_controller_crawl = {
    {"crawl", "statically stable crawl, one leg at a time, the body swaying away from the swing leg (leg IK, joint PD with feed-forward)",
     &(const mbs_option_table){"crawl", spec, (int)(sizeof spec / sizeof *spec), &mbsi_pd_option_table,
                               offsetof(crawl_options, pd), sizeof(crawl_options)}},
    init, mbsi_gait_compute, mbsi_gait_fini, NULL, mbsi_gait_state, NULL,
};
