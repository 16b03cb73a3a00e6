/* mbs.h — umbrella header of the mbs rigid-body engine. */
#ifndef MBS_H
#define MBS_H

#include "mbs/version.h"
#include "mbs/error.h"
#include "mbs/qp.h"
#include "mbs/model.h"
#include "mbs/dynamics.h"
#include "mbs/liegroup.h"
#include "mbs/ess.h"
#include "mbs/contact.h"
#include "mbs/step.h"
#include "mbs/ilqr.h"
#include "mbs/variational.h"
#include "mbs/batch.h"
#include "mbs/sim.h"

#endif
