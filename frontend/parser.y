/* The .swn grammar (documented in docs/language.md). Actions build the module's
 * unelaborated form directly: settings, blocks and statements with expression values. */
%define api.pure full
%define api.prefix {swn}
%define parse.error custom
%locations
%initial-action { @$.first_column = @$.last_column = ctx->first_column; }
%param {void *scanner}
%parse-param {ParseCtx *ctx}

%code requires {
#include "parse_ctx.h"
}

%code provides {
int swnlex(SWNSTYPE *lval, SWNLTYPE *lloc, void *scanner);
}

%code {
#include <string.h>

#include "syntax_error.h"

#define YYMAXDEPTH 10000 /* bison's default, named for the message */

#define LOC_OF(l) ctx_loc(ctx, (l).first_line, (l).first_column)

/* Bison's own errors: a full stack (its "memory exhausted") is input nested too deeply. */
static void swnerror(SWNLTYPE *loc, void *scanner, ParseCtx *ctx, const char *msg) {
  (void)scanner;
  if (!strcmp(msg, "memory exhausted"))
    report_too_deep(LOC_OF(*loc), YYMAXDEPTH);
  else
    diag_error(LOC_OF(*loc), "%s", msg);
}


static Expr *new_expr(ParseCtx *ctx, ExprKind kind, SWNLTYPE loc) {
  Expr *e = arena_alloc(&ctx->m->arena, sizeof *e);
  e->kind = kind;
  e->loc = LOC_OF(loc);
  return e;
}

static Expr *binary(ParseCtx *ctx, char op, Expr *l, Expr *r, SWNLTYPE loc) {
  Expr *e = new_expr(ctx, EX_BINARY, loc);
  e->op = op;
  e->lhs = l;
  e->rhs = r;
  return e;
}

static void add_setting(ParseCtx *ctx, const char *section, const char *key, SWNLTYPE loc, Expr *v) {
  Setting s = {.section = section, .key = key, .loc = LOC_OF(loc), .value = v};
  vec_push(&ctx->m->arena, ctx->m->settings, s);
}

static Block *begin_block(ParseCtx *ctx, Block *b, const char *name, SWNLTYPE loc) {
  b->name = name;
  b->loc = LOC_OF(loc);
  ctx->block = b;
  return b;
}
}

%union {
  int64_t num;
  double real;
  const char *str;
  Expr *expr;
  Stmt *stmt;
}

%token NETWORK "'network'" BLOCK "'block'" RETURN "'return'" LET "'let'" REPEAT "'repeat'"
%token <num> INT "integer" BOOL "boolean"
%token <real> FLOAT "number"
%token <str> IDENT "name" STRING "string"
%token START_FILE START_VALUE

%left '+' '-'
%left '*' '/'
%precedence NEG

%type <expr> expr list items_opt
%type <stmt> args arglist
%type <str> section_name repeat_index

%%

start
  : START_FILE items
  | START_VALUE expr                  { ctx->value = $2; }
  ;

items
  : %empty
  | items item
  ;

item
  : NETWORK IDENT '{'                 {
                                        if (ctx->seen_network)
                                          diag_error(LOC_OF(@1), "a file holds one network; '%s' is a second", $2);
                                        ctx->seen_network = true;
                                        ctx->m->name = $2;
                                        ctx->m->loc = LOC_OF(@2);
                                        begin_block(ctx, &ctx->m->body, $2, @2);
                                      }
    stmts '}'                         { ctx->block = NULL; }
  | LET IDENT '=' expr semi_opt       { add_setting(ctx, NULL, $2, @2, $4); }
  | section_name '{' entries '}'      { ctx->section = NULL; }
  | BLOCK IDENT '('                   {
                                        Block b = {0};
                                        vec_push(&ctx->m->arena, ctx->m->blocks, b);
                                        begin_block(ctx, &ctx->m->blocks.data[ctx->m->blocks.len - 1], $2, @2);
                                      }
    params ')' '{' stmts RETURN IDENT semi_opt '}'
                                      {
                                        Block *b = &ctx->m->blocks.data[ctx->m->blocks.len - 1];
                                        b->ret = $10;
                                        b->ret_loc = LOC_OF(@10);
                                        ctx->block = NULL;
                                      }
  | error '}'                         { ctx->block = NULL; }
  ;

section_name
  : IDENT                             { $$ = $1; ctx->section = $1; }
  ;

entries
  : %empty
  | entries IDENT '=' expr semi_opt   { add_setting(ctx, ctx->section, $2, @2, $4); }
  ;

params
  : %empty
  | paramlist
  | paramlist ','
  ;

paramlist
  : param
  | paramlist ',' param
  ;

param
  : IDENT                             {
                                        BlockParam p = {.name = $1, .loc = LOC_OF(@1)};
                                        vec_push(&ctx->m->arena, ctx->block->params, p);
                                      }
  | IDENT '=' expr                    {
                                        BlockParam p = {.name = $1, .loc = LOC_OF(@1), .deflt = $3};
                                        vec_push(&ctx->m->arena, ctx->block->params, p);
                                      }
  ;

stmts
  : %empty
  | stmts stmt
  ;

stmt
  : IDENT '=' IDENT '(' args ')' semi_opt
                                      {
                                        Stmt *s = $5;
                                        s->name = $1;
                                        s->loc = LOC_OF(@1);
                                        s->callee = $3;
                                        s->callee_loc = LOC_OF(@3);
                                        if (ctx->block) vec_push(&ctx->m->arena, ctx->block->body, *s);
                                      }
  | IDENT '=' REPEAT '(' expr repeat_index ')' IDENT '(' args ')' semi_opt
                                      {
                                        Stmt *s = $10;
                                        s->name = $1;
                                        s->loc = LOC_OF(@1);
                                        s->callee = $8;
                                        s->callee_loc = LOC_OF(@8);
                                        s->repeat = $5;
                                        s->repeat_index = $6;
                                        if (ctx->block) vec_push(&ctx->m->arena, ctx->block->body, *s);
                                      }
  | error ')' semi_opt
  ;

repeat_index
  : %empty                            { $$ = NULL; }
  | ',' IDENT                         { $$ = $2; }
  ;

args
  : %empty                            { $$ = arena_alloc(&ctx->m->arena, sizeof(Stmt)); }
  | arglist
  | arglist ','
  ;

arglist
  : expr                              {
                                        $$ = arena_alloc(&ctx->m->arena, sizeof(Stmt));
                                        Arg a = {.loc = LOC_OF(@1), .value = $1};
                                        vec_push(&ctx->m->arena, $$->args, a);
                                      }
  | IDENT '=' expr                    {
                                        $$ = arena_alloc(&ctx->m->arena, sizeof(Stmt));
                                        Arg a = {.key = $1, .loc = LOC_OF(@1), .value = $3};
                                        vec_push(&ctx->m->arena, $$->args, a);
                                      }
  | arglist ',' expr                  {
                                        Arg a = {.loc = LOC_OF(@3), .value = $3};
                                        vec_push(&ctx->m->arena, $1->args, a);
                                        $$ = $1;
                                      }
  | arglist ',' IDENT '=' expr        {
                                        Arg a = {.key = $3, .loc = LOC_OF(@3), .value = $5};
                                        vec_push(&ctx->m->arena, $1->args, a);
                                        $$ = $1;
                                      }
  ;

semi_opt
  : %empty
  | ';'
  ;

expr
  : INT                               { $$ = new_expr(ctx, EX_INT, @1); $$->i = $1; }
  | FLOAT                             { $$ = new_expr(ctx, EX_FLOAT, @1); $$->f = $1; }
  | BOOL                              { $$ = new_expr(ctx, EX_BOOL, @1); $$->i = $1; }
  | STRING                            { $$ = new_expr(ctx, EX_STR, @1); $$->s = $1; }
  | IDENT                             { $$ = new_expr(ctx, EX_NAME, @1); $$->s = $1; }
  | '[' items_opt ']'                 { $$ = $2; $$->loc = LOC_OF(@1); }
  | '(' expr ')'                      { $$ = $2; }
  | '-' expr %prec NEG                { $$ = new_expr(ctx, EX_NEG, @1); $$->lhs = $2; }
  | expr '+' expr                     { $$ = binary(ctx, '+', $1, $3, @2); }
  | expr '-' expr                     { $$ = binary(ctx, '-', $1, $3, @2); }
  | expr '*' expr                     { $$ = binary(ctx, '*', $1, $3, @2); }
  | expr '/' expr                     { $$ = binary(ctx, '/', $1, $3, @2); }
  ;

items_opt
  : %empty                            { $$ = new_expr(ctx, EX_LIST, @$); }
  | list
  | list ','
  ;

list
  : expr                              { $$ = new_expr(ctx, EX_LIST, @1); vec_push(&ctx->m->arena, $$->items, $1); }
  | list ',' expr                     { $$ = $1; vec_push(&ctx->m->arena, $$->items, $3); }
  ;

%%

/* Bison's "detailed" message, placed where a missing bracket is (syntax_error.c). */
static int yyreport_syntax_error(const yypcontext_t *pc, void *scanner, ParseCtx *ctx) {
  (void)scanner;
  yysymbol_kind_t kinds[SYNTAX_EXPECTED_MAX];
  int n = yypcontext_expected_tokens(pc, kinds, SYNTAX_EXPECTED_MAX);
  const char *expected[SYNTAX_EXPECTED_MAX];
  for (int i = 0; i < n; i++) expected[i] = yysymbol_name(kinds[i]);
  yysymbol_kind_t token = yypcontext_token(pc);
  report_syntax_error(&ctx->syntax, LOC_OF(*yypcontext_location(pc)),
                      token == YYSYMBOL_YYEMPTY ? NULL : yysymbol_name(token), expected, n < 0 ? 0 : n);
  return 0;
}
