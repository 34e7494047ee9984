/* Fuzz target: nz_session_parse (the session-metadata JSON of `nwbzarr
 * convert --meta`).
 *
 * Properties: never crashes or leaks; failure is NZ_EFORMAT naming the
 * document and *out stays NULL; on success every string the session points
 * to is readable (strlen on each, so ASan sees a dangling pointer), the
 * counts match their arrays, and nz_session_free releases everything. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "nwbzarr.h"
#include "fuzz_common.h"

static size_t touched;

static void touch(const char *s)
{
	if (s)
		touched += strlen(s);
}

static void touch_all(const nz_session *s)
{
	touch(s->file.identifier);
	touch(s->file.session_description);
	touch(s->file.session_start_time);
	for (size_t i = 0; i < s->file.n_experimenter; i++)
		touch(s->file.experimenter[i]);
	for (size_t i = 0; i < s->file.n_keywords; i++)
		touch(s->file.keywords[i]);
	CHECK(s->n_devices == 0 || s->devices);
	for (size_t i = 0; i < s->n_devices; i++) {
		CHECK(s->devices[i].name != NULL);
		touch(s->devices[i].name);
		touch(s->devices[i].description);
		touch(s->devices[i].manufacturer);
	}
	CHECK(s->n_groups == 0 || s->groups);
	for (size_t i = 0; i < s->n_groups; i++) {
		touch(s->groups[i].name);
		touch(s->groups[i].description);
		touch(s->groups[i].location);
		touch(s->groups[i].device);
	}
	CHECK(s->n_electrodes == 0 || s->electrodes);
	for (size_t i = 0; i < s->n_electrodes; i++)
		touch(s->electrodes[i].group);
	if (s->has_subject) {
		touch(s->subject.subject_id);
		touch(s->subject.age);
	}
	touch(s->series.name);
	/* An empty list gives a non-NULL array of 0 values (convert then reports
	 * the count mismatch), so only n > 0 requires the array. */
	CHECK(s->n_channel_conversion == 0 || s->channel_conversion != NULL);
	for (size_t i = 0; i < s->n_channel_conversion; i++)
		touched += s->channel_conversion[i] == s->channel_conversion[i];
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	nz_session *s = (nz_session *)1;
	int rc = nz_session_parse(&s, (const char *)data, size, "fuzz-session.json");
	if (rc < 0) {
		CHECK(rc == NZ_EFORMAT || rc == NZ_ENOMEM);
		CHECK(strstr(nz_error_last()->message, "fuzz-session.json") != NULL);
		CHECK(s == NULL);
		return 0;
	}
	CHECK(rc == 0 && s != NULL);
	touch_all(s);
	nz_session_free(s);
	return 0;
}
