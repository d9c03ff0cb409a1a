/* sizing_table.h - placeholder until measured */
static const struct sizing_point P_NONE[] = { { 8, 6, 2e-2 }, { 16, 11, 4e-4 } };
static const struct sizing_series SIZING_SERIES[] = {
	{ FILTER_CLASSIC, 2, 1, P_NONE, 2 },
};
