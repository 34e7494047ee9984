/* Side-car and session metadata parsers: good documents and bad ones, each
 * bad one with an error naming the document and the problem. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "test.h"

#define PARSE_META(info, s) nz_spikeglx_meta_parse(info, s, strlen(s), "rec.ap.meta")
#define PARSE_OEBIN(info, s, stream) nz_oebin_parse(info, s, strlen(s), "structure.oebin", stream)
#define PARSE_SESSION(out, s) nz_session_parse(out, s, strlen(s), "session.json")

static void test_spikeglx(void)
{
	nz_recording_info info;
	const char *np1 = "imAiRangeMax=0.6\nimAiRangeMin=-0.6\nimMaxInt=512\n"
			  "imSampRate=30000.123\nnSavedChans=385\ntypeThis=imec\r\n"
			  "~imroTbl=(0,384)(0 0 0 500 250 1)(1 0 0 500 250 1)\n";
	const char *nidq = "niAiRangeMax=5\nniMaxInt=32768\nniMNGain=200\nniSampRate=25000\n"
			   "nSavedChans=8\ntypeThis=nidq\n";
	ASSERT_OK(PARSE_META(&info, np1));
	ASSERT_EQ_STR(info.format, "spikeglx");
	ASSERT_EQ_U64(info.channels, 385);
	ASSERT(info.rate == 30000.123);
	ASSERT(fabs(info.conversion - 0.6 / (512 * 500.0)) < 1e-15);
	ASSERT_EQ_STR(info.dtype, "<i2");
	ASSERT_OK(PARSE_META(&info, nidq));
	ASSERT_EQ_U64(info.channels, 8);
	ASSERT(info.rate == 25000);
	ASSERT(fabs(info.conversion - 5.0 / (32768 * 200.0)) < 1e-15);

	ASSERT_ERR(NZ_EFORMAT, PARSE_META(&info, "imSampRate=30000\nnSavedChans=4\ngarbage\n"));
	ASSERT_CONTAINS(nz_error_last()->message, "rec.ap.meta:3");
	ASSERT_ERR(NZ_EFORMAT, PARSE_META(&info, "imSampRate=30000\n"));
	ASSERT_CONTAINS(nz_error_last()->message, "nSavedChans");
	ASSERT_ERR(NZ_EFORMAT, PARSE_META(&info, "nSavedChans=4.5\nimSampRate=1\n"));
	ASSERT_ERR(NZ_EFORMAT, PARSE_META(&info, "nSavedChans=4\nimSampRate=-3\n"));
	ASSERT_CONTAINS(nz_error_last()->message, "SampRate");
}

static void test_oebin(void)
{
	nz_recording_info info;
	const char *doc =
		"{\"GUI version\": \"0.6.4\", \"continuous\": ["
		"{\"folder_name\": \"Rhythm_FPGA-100.0/\", \"sample_rate\": 30000.0,"
		" \"num_channels\": 64, \"channels\": [{\"bit_volts\": 0.195, \"units\": \"uV\"}]},"
		"{\"folder_name\": \"NI-DAQmx-101.0/\", \"sample_rate\": 1000,"
		" \"num_channels\": 8, \"channels\": [{\"bit_volts\": 0.5, \"units\": \"mV\"}]}]}";
	ASSERT_OK(PARSE_OEBIN(&info, doc, NULL));
	ASSERT_EQ_STR(info.format, "openephys");
	ASSERT_EQ_U64(info.channels, 64);
	ASSERT(info.rate == 30000.0);
	ASSERT(fabs(info.conversion - 0.195e-6) < 1e-18);
	ASSERT_OK(PARSE_OEBIN(&info, doc, "NI-DAQmx-101.0"));
	ASSERT_EQ_U64(info.channels, 8);
	ASSERT(fabs(info.conversion - 0.5e-3) < 1e-15);
	ASSERT_ERR(NZ_ENOTFOUND, PARSE_OEBIN(&info, doc, "nope"));
	ASSERT_CONTAINS(nz_error_last()->message, "nope");
	ASSERT_ERR(NZ_EFORMAT, PARSE_OEBIN(&info, "{\"continuous\": [", NULL));
	ASSERT_CONTAINS(nz_error_last()->message, "structure.oebin");
	ASSERT_ERR(NZ_EFORMAT, PARSE_OEBIN(&info, "{\"continuous\": []}", NULL));
	ASSERT_ERR(NZ_EFORMAT, PARSE_OEBIN(&info, "{\"continuous\": [{\"sample_rate\": 1}]}", NULL));
	ASSERT_CONTAINS(nz_error_last()->message, "num_channels");
}

static void test_probe(void)
{
	nz_recording_info info;
	char dir[1024], path[1200];
	FILE *f;
	const char *tmp = getenv("NZ_TMP") ? getenv("NZ_TMP") : "/tmp";
	snprintf(dir, sizeof dir, "%s/nwb_probe/rec/continuous/Rhythm_FPGA-100.0", tmp);
	snprintf(path, sizeof path, "rm -rf '%s/nwb_probe' && mkdir -p '%s'", tmp, dir);
	ASSERT(system(path) == 0);
	snprintf(path, sizeof path, "%s/continuous.dat", dir);
	ASSERT_EQ_INT(nz_recording_info_probe(&info, path), 0); /* nothing there */
	snprintf(path, sizeof path, "%s/nwb_probe/rec/structure.oebin", tmp);
	ASSERT((f = fopen(path, "w")));
	fputs("{\"continuous\": [{\"folder_name\": \"Other-1/\", \"sample_rate\": 1,"
	      " \"num_channels\": 1}, {\"folder_name\": \"Rhythm_FPGA-100.0/\","
	      " \"sample_rate\": 30000, \"num_channels\": 16}]}", f);
	fclose(f);
	snprintf(path, sizeof path, "%s/continuous.dat", dir);
	ASSERT_EQ_INT(nz_recording_info_probe(&info, path), 1);
	ASSERT_EQ_U64(info.channels, 16); /* the stream of the recording's folder */
	ASSERT_CONTAINS(info.source_path, "structure.oebin");

	snprintf(path, sizeof path, "%s/nwb_probe/x.ap.meta", tmp);
	ASSERT((f = fopen(path, "w")));
	fputs("nSavedChans=3\nimSampRate=2500\nbroken line\n", f);
	fclose(f);
	snprintf(path, sizeof path, "%s/nwb_probe/x.ap.bin", tmp);
	ASSERT_ERR(NZ_EFORMAT, nz_recording_info_probe(&info, path));
	ASSERT_CONTAINS(nz_error_last()->message, "x.ap.meta:3");
}

static void test_session(void)
{
	nz_session *s = NULL;
	const char *good =
		"{\"identifier\": \"id1\", \"session_description\": \"d\","
		" \"session_start_time\": \"2024-01-02T03:04:05+01:00\","
		" \"experimenter\": \"Doe, Jane\", \"keywords\": [\"a\", \"b\"],"
		" \"subject\": {\"subject_id\": \"m1\", \"species\": \"Mus musculus\", \"age\": \"P90D\"},"
		" \"devices\": [{\"name\": \"probe0\", \"manufacturer\": \"IMEC\"}],"
		" \"electrode_groups\": [{\"name\": \"s0\", \"location\": \"CA1\", \"device\": \"probe0\"}],"
		" \"electrodes\": [{\"group\": \"s0\", \"x\": 1.5}, {\"group\": \"s0\", \"imp\": 2e6}],"
		" \"series\": {\"name\": \"ap\", \"conversion\": 2e-6, \"channel_conversion\": [1, 0.5]}}";
	ASSERT_OK(PARSE_SESSION(&s, good));
	ASSERT_EQ_STR(s->file.identifier, "id1");
	ASSERT_EQ_INT(s->file.n_experimenter, 1);
	ASSERT_EQ_STR(s->file.experimenter[0], "Doe, Jane");
	ASSERT_EQ_INT(s->file.n_keywords, 2);
	ASSERT_EQ_STR(s->file.keywords[1], "b");
	ASSERT(s->has_subject);
	ASSERT_EQ_STR(s->subject.age, "P90D");
	ASSERT_EQ_INT(s->n_devices, 1);
	ASSERT_EQ_STR(s->devices[0].manufacturer, "IMEC");
	ASSERT(s->devices[0].description == NULL);
	ASSERT_EQ_STR(s->groups[0].device, "probe0");
	ASSERT_EQ_INT(s->n_electrodes, 2);
	ASSERT(s->electrodes[0].x == 1.5 && isnan(s->electrodes[0].y));
	ASSERT(s->electrodes[1].imp == 2e6);
	ASSERT_EQ_STR(s->series.name, "ap");
	ASSERT(s->series.conversion == 2e-6);
	ASSERT_EQ_INT(s->n_channel_conversion, 2);
	ASSERT(s->channel_conversion[1] == 0.5f);
	nz_session_free(s);
	nz_session_free(NULL);

	ASSERT_ERR(NZ_EFORMAT, PARSE_SESSION(&s, "{\"identifer\": \"typo\"}"));
	ASSERT_CONTAINS(nz_error_last()->message, "session.json");
	ASSERT_CONTAINS(nz_error_last()->message, "identifer");
	ASSERT(s == NULL);
	ASSERT_ERR(NZ_EFORMAT, PARSE_SESSION(&s, "{\"lab\": 3}"));
	ASSERT_CONTAINS(nz_error_last()->message, "lab must be a string");
	ASSERT_ERR(NZ_EFORMAT, PARSE_SESSION(&s, "{\"subject\": {\"age\": \"P1D\", \"eyes\": 2}}"));
	ASSERT_CONTAINS(nz_error_last()->message, "subject.eyes");
	ASSERT_ERR(NZ_EFORMAT, PARSE_SESSION(&s, "{\"electrodes\": [{\"x\": 1}]}"));
	ASSERT_CONTAINS(nz_error_last()->message, "electrodes[0].group is required");
	ASSERT_ERR(NZ_EFORMAT, PARSE_SESSION(&s, "{\"electrodes\": [{\"group\": \"g\", \"x\": \"1\"}]}"));
	ASSERT_CONTAINS(nz_error_last()->message, "electrodes[0].x must be a number");
	ASSERT_ERR(NZ_EFORMAT, PARSE_SESSION(&s, "{\"electrodes\": [{\"group\": \"g\"}]}"));
	ASSERT_CONTAINS(nz_error_last()->message, "need electrode_groups");
	ASSERT_ERR(NZ_EFORMAT, PARSE_SESSION(&s, "{\"electrode_groups\": [{\"name\": \"g\"}],"
						 " \"electrodes\": [{\"group\": \"h\"}]}"));
	ASSERT_CONTAINS(nz_error_last()->message, "electrodes[0].group 'h'");
	ASSERT_ERR(NZ_EFORMAT, PARSE_SESSION(&s, "{\"electrode_groups\": [{\"name\": \"g\","
						 " \"device\": \"d\"}]}"));
	ASSERT_CONTAINS(nz_error_last()->message, "device 'd' is not in devices");
	ASSERT_ERR(NZ_EFORMAT, PARSE_SESSION(&s, "{\"keywords\": [1]}"));
	ASSERT_ERR(NZ_EFORMAT, PARSE_SESSION(&s, "[1, 2]"));
	ASSERT_CONTAINS(nz_error_last()->message, "JSON object");
	ASSERT_ERR(NZ_EFORMAT, PARSE_SESSION(&s, "{\"lab\": \"x\",}"));
	ASSERT_CONTAINS(nz_error_last()->message, "session.json");
	ASSERT_ERR(NZ_ENOTFOUND, nz_session_load(&s, "/nonexistent/session.json"));
	ASSERT_CONTAINS(nz_error_last()->message, "/nonexistent/session.json");
}

int main(void)
{
	test_spikeglx();
	test_oebin();
	test_probe();
	test_session();
	return 0;
}
