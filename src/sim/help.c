/* help.c — the options of every stepper and controller as text: ./sim --help's list, and in
 * markdown the tables of docs/scenarios.md. Each scheme's table describes itself (options.c). */
#include "sim_internal.h"


int mbs_sim_options_text(int markdown, char *buf, size_t n)
{
    mbs_text b = {buf, buf ? n : 0, 0};
    if (buf && n) buf[0] = '\0';
    for (int part = 0; part < 2; part++) {
        int count = part ? mbs_stepper_count() : mbs_controller_count();
        if (markdown) mbsi_textf(&b, part ? "### Stepper options (a section named after the stepper, e.g. `[expo]`)\n\n"
                                   : "### Controller options (`[controller]`, after `type` and `dt`)\n\n");
        else mbsi_textf(&b, part ? "steppers ([stepper] name; options in a section named after it):\n"
                          : "controllers ([controller] type; options in [controller]):\n");
        for (int i = 0; i < count; i++) {
            const mbs_scheme_info *info = part ? mbs_stepper_at(i) : mbs_controller_at(i);
            size_t room = b.len < b.n ? b.n - b.len : 0;
            int k = mbs_options_describe(info, markdown, room ? b.p + b.len : NULL, room);
            if (k > 0) b.len += (size_t)k;
            if (markdown) mbsi_textf(&b, "\n");
        }
    }
    return (int)b.len;
}
